import Foundation

/// The Swift blocks of the README and of the DocC articles, for tests that check an example still
/// reads as the documentation shows it.
public enum DocumentationBlocks {
    /// Every Swift block of the README and of the DocC articles, normalised: the README links to
    /// the articles, which hold the longer examples.
    public static func all() throws -> [[String]] {
        let root = repositoryRoot
        var documents = [root.appendingPathComponent("README.md")]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("Documentation.docc")
            let articles = (try? FileManager.default.contentsOfDirectory(atPath: catalog.path)) ?? []
            documents += articles.sorted().filter { $0.hasSuffix(".md") }.map { catalog.appendingPathComponent($0) }
        }
        return try documents.flatMap { document in
            try String(contentsOf: document, encoding: .utf8).components(separatedBy: "```swift\n").dropFirst().map {
                normalise($0.components(separatedBy: "```")[0])
            }
        }
    }

    /// The lines of a block, trimmed, without the empty ones.
    public static func normalise(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The code between `// README <region> BEGIN` and `// README <region> END` in a source file's
    /// text, normalised; `nil` when it has no such region.
    public static func region(_ region: String, of source: String) -> [String]? {
        let parts = source.components(separatedBy: "// README \(region) BEGIN\n")
        guard parts.count == 2 else { return nil }
        return normalise(parts[1].components(separatedBy: "// README \(region) END")[0])
    }
}
