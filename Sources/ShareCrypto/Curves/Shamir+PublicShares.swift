extension Shamir {
    /// X_i = Σ_k i^k·A_k for several indices of one commitment list, as one process holding several
    /// receivers needs them; `nil` where X_i is the identity or the index is out of range.
    ///
    /// For a degree-1 list (t = 2, the common case) consecutive indices step by one addition,
    /// X_{i+1} = X_i + A_1, where Horner's rule would spend a doubling or more on each: exact, the
    /// same points, so every check made with them is the check it was.
    /// - Parameters:
    ///   - indices: The party indices, in any order.
    ///   - commitments: A_0 … A_{t−1}.
    package static func publicShares(indices: [Int], commitments: [Point]) -> [Point?] {
        var shares: [Point?] = []
        for (position, index) in indices.enumerated() {
            if commitments.count == 2, position > 0, indices[position - 1] == index - 1, indexRange.contains(index),
                let previous = shares[position - 1], let next = try? previous + commitments[1]
            {
                shares.append(next)
                continue
            }
            shares.append(try? publicShare(index: index, commitments: commitments))
        }
        return shares
    }
}
