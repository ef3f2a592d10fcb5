#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The text forms a secret could take if it leaked into a log line, an error, a description or
/// command output. Test support for the secret-hygiene tests of every target (hence `package`): they
/// collect what the code printed and search it for each form. The encoders here are Foundation's
/// and its own, not the ones under test.
package struct SecretForms: Sendable {
    /// What the secret is, for failure messages (never the secret itself).
    package let name: String
    /// Every form to search for.
    package let forms: [String]

    /// The forms of a byte string: lowercase and uppercase hex, standard and URL-safe base64 at every
    /// byte alignment (so a secret inside a larger encoded blob is found too), the decimal value of
    /// the bytes read big-endian and little-endian (a scalar in either curve's order), and the text
    /// itself when the bytes are UTF-8 of at least 8 characters (passwords).
    /// - Parameters:
    ///   - name: A label for messages.
    ///   - bytes: The secret bytes (at least 8, so that no form is short enough to match by chance).
    package init(_ name: String, bytes: [UInt8]) {
        precondition(bytes.count >= 8, "a secret this short would match by chance")
        self.name = name
        let hex = bytes.map { byte in String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16) }.joined()
        var forms = [hex, hex.uppercased()]
        for shift in 0..<3 {
            // Whole base64 groups that lie inside the secret when it starts `shift` bytes into a blob.
            let encoded = Array((Data(repeating: 0, count: shift) + Data(bytes)).base64EncodedString())
            let start = shift == 0 ? 0 : 4
            let end = (shift + bytes.count) / 3 * 4
            guard end > start else { continue }
            let standard = String(encoded[start..<end])
            forms.append(standard)
            forms.append(String(standard.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }))
        }
        forms.append(Self.decimal(bytes))
        forms.append(Self.decimal(bytes.reversed()))
        if let text = String(validating: bytes, as: UTF8.self), text.count >= 8 { forms.append(text) }
        self.forms = forms
    }

    /// The forms of a secret held in a ``SecureBytes``.
    package init(_ name: String, secret: SecureBytes) {
        self.init(name, bytes: secret.revealedBytes())
    }

    /// The names of the secrets any of whose forms occur in `text`, with the form's kind.
    /// - Parameters:
    ///   - secrets: The secrets to look for.
    ///   - text: What the code printed, logged or threw.
    package static func leaks(of secrets: [SecretForms], in text: String) -> [String] {
        secrets.flatMap { secret in
            secret.forms.enumerated().compactMap { index, form in
                text.contains(form) ? "\(secret.name) (form \(index))" : nil
            }
        }
    }

    /// The unsigned big-endian integer in `bytes`, in decimal, by long division.
    static func decimal(_ bytes: some Collection<UInt8>) -> String {
        var number = Array(bytes.drop { $0 == 0 })
        var digits: [Character] = []
        while !number.isEmpty {
            var remainder = 0
            var quotient: [UInt8] = []
            for byte in number {
                let value = remainder << 8 | Int(byte)
                let digit = UInt8(value / 10)
                if !quotient.isEmpty || digit != 0 { quotient.append(digit) }
                remainder = value % 10
            }
            digits.append(Character(String(remainder)))
            number = quotient
        }
        return digits.isEmpty ? "0" : String(digits.reversed())
    }
}
