/// A command's help discussion: what is not obvious from the options, then an EXAMPLES block of
/// real invocations (the help-tree test requires every command to have one).
/// - Parameters:
///   - text: The discussion, in paragraphs.
///   - examples: Whole command lines, each starting with `share-recovery`.
func helpText(_ text: String, examples: [String]) -> String {
    text + "\n\nEXAMPLES:\n" + examples.map(exampleLines).joined(separator: "\n")
}

/// ArgumentParser wraps help text at 80 columns with no preformatted mode, which would break a long
/// example mid-option. So each example is laid out here as shell lines joined by ` \`, every line
/// short enough to survive the wrap, and an option stays on one line with its value.
private func exampleLines(_ example: String) -> String {
    let width = 76
    var units: [String] = []
    for word in example.split(separator: " ").map(String.init) {
        if let last = units.last, (last.hasPrefix("--") || last == ">") && !last.contains(" ") && !word.hasPrefix("-") {
            units[units.count - 1] = last + " " + word
        } else {
            units.append(word)
        }
    }
    var lines: [String] = []
    var line = "  "
    for unit in units {
        if line.trimmingPrefixSpaces.isEmpty {
            line += unit
        } else if line.count + 1 + unit.count + 2 <= width {
            line += " " + unit
        } else {
            lines.append(line + " \\")
            line = "      " + unit
        }
    }
    lines.append(line)
    return lines.joined(separator: "\n")
}

extension String {
    fileprivate var trimmingPrefixSpaces: Substring { drop { $0 == " " } }
}
