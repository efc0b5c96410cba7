import Foundation

/// Rails' English inflections: `train` ↔ `trains`, `person` ↔ `people`, `sheep` ↔ `sheep`.
///
/// The rules are Rails' (`active_support/inflections.rb`) with the additions GRDB ships, tried from
/// the most recently added. Irregular words match as suffixes (`salesperson` → `salespeople`) and
/// uncountable words as the last word (`my money`).
///
/// ```swift
/// Inflector.english.pluralize("train_car")   // "train_cars"
/// Inflector.english.singularize("people")    // "person"
///
/// var inflector = Inflector.english
/// inflector.irregular("cow", "kine")
/// ```
public struct Inflector: Sendable {
    struct Rule: Sendable {
        let expression: NSRegularExpression
        let template: String
    }

    private var plurals: [Rule] = []
    private var singulars: [Rule] = []
    private var uncountables: Set<String> = []

    /// An inflector with no rules: words come back unchanged.
    public init() {}

    /// Adds a pluralization rule, tried before the existing ones.
    ///
    /// - Parameters:
    ///   - pattern: A case-insensitive regular expression, usually anchored with `$`.
    ///   - template: The replacement, with `$1` for captured groups.
    public mutating func plural(_ pattern: String, _ template: String) {
        guard let rule = Self.rule(pattern, template) else { return }
        plurals.append(rule)
    }

    /// Adds a singularization rule, tried before the existing ones.
    public mutating func singular(_ pattern: String, _ template: String) {
        guard let rule = Self.rule(pattern, template) else { return }
        singulars.append(rule)
    }

    /// Declares a pair that follows no rule, such as `person`/`people`.
    public mutating func irregular(_ singular: String, _ plural: String) {
        uncountables.remove(singular.lowercased())
        uncountables.remove(plural.lowercased())
        guard let s0 = singular.first, let p0 = plural.first else { return }
        let sRest = NSRegularExpression.escapedPattern(for: String(singular.dropFirst()))
        let pRest = String(plural.dropFirst())
        let pRestPattern = NSRegularExpression.escapedPattern(for: pRest)
        if s0.lowercased() == p0.lowercased() {
            let first = NSRegularExpression.escapedPattern(for: String(s0))
            self.plural("(\(first))\(sRest)$", "$1" + pRest)
            self.plural("(\(first))\(pRestPattern)$", "$1" + pRest)
            self.singular("(\(first))\(sRest)$", "$1" + String(singular.dropFirst()))
            self.singular("(\(first))\(pRestPattern)$", "$1" + String(singular.dropFirst()))
        } else {
            for (initial, rest) in [(s0, sRest), (p0, pRestPattern)] {
                let upper = NSRegularExpression.escapedPattern(for: initial.uppercased())
                let lower = NSRegularExpression.escapedPattern(for: initial.lowercased())
                self.plural(upper + "(?i)" + rest + "$", p0.uppercased() + pRest)
                self.plural(lower + "(?i)" + rest + "$", p0.lowercased() + pRest)
                self.singular(upper + "(?i)" + rest + "$", s0.uppercased() + singular.dropFirst())
                self.singular(lower + "(?i)" + rest + "$", s0.lowercased() + singular.dropFirst())
            }
        }
    }

    /// Declares words whose plural is the same as the singular, such as `sheep`.
    public mutating func uncountable(_ words: [String]) {
        for word in words { uncountables.insert(word.lowercased()) }
    }

    /// The plural of a word or of the last word of a phrase: `train_car` → `train_cars`.
    public func pluralize(_ word: String) -> String { inflect(word, with: plurals) }

    /// The singular of a word or of the last word of a phrase: `train_cars` → `train_car`.
    public func singularize(_ word: String) -> String { inflect(word, with: singulars) }

    private func inflect(_ word: String, with rules: [Rule]) -> String {
        guard !word.isEmpty, !isUncountable(word) else { return word }
        let range = NSRange(word.startIndex..., in: word)
        for rule in rules.reversed() where rule.expression.firstMatch(in: word, range: range) != nil {
            return rule.expression.stringByReplacingMatches(
                in: word, range: range, withTemplate: rule.template)
        }
        return word
    }

    private func isUncountable(_ word: String) -> Bool {
        let lowered = word.lowercased()
        if uncountables.contains(lowered) { return true }
        // Rails compares the last word: letters and digits after the last space or underscore.
        guard let separator = lowered.lastIndex(where: { $0 == " " || $0 == "_" }) else { return false }
        return uncountables.contains(String(lowered[lowered.index(after: separator)...]))
    }

    private static func rule(_ pattern: String, _ template: String) -> Rule? {
        guard let expression = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else {
            return nil
        }
        return Rule(expression: expression, template: template)
    }
}

extension Inflector {
    /// Rails' English rules, irregulars and uncountables.
    public static let english: Inflector = {
        var inflector = Inflector()
        for (pattern, template) in [
            ("$", "s"), ("s$", "s"), ("^(ax|test)is$", "$1es"), ("(octop|vir)us$", "$1i"), ("(octop|vir)i$", "$1i"),
            ("(alias|bias|canvas|focus|gas|lens|status)$", "$1es"), ("(bu)s$", "$1ses"),
            ("(buffal|tomat|her)o$", "$1oes"), ("([ti])um$", "$1a"), ("([ti])a$", "$1a"), ("sis$", "ses"),
            ("(?:([^f])fe|([lr])f)$", "$1$2ves"), ("(hive)$", "$1s"), ("([^aeiouy]|qu)y$", "$1ies"),
            ("(x|ch|ss|sh)$", "$1es"), ("(matr|vert|ind)(?:ix|ex)$", "$1ices"), ("^(m|l)ouse$", "$1ice"),
            ("^(m|l)ice$", "$1ice"), ("^(ox)$", "$1en"), ("^(oxen)$", "$1"), ("(quiz)$", "$1zes"),
            ("(canva)s$", "$1ses"),
        ] {
            inflector.plural(pattern, template)
        }
        for (pattern, template) in [
            ("s$", ""), ("(ss)$", "$1"), ("(n)ews$", "$1ews"), ("([ti])a$", "$1um"),
            ("((a)naly|(b)a|(d)iagno|(p)arenthe|(p)rogno|(s)ynop|(t)he)(sis|ses)$", "$1sis"),
            ("(^analy)(sis|ses)$", "$1sis"), ("([^f])ves$", "$1fe"), ("(hive)s$", "$1"), ("(tive)s$", "$1"),
            ("([lr])ves$", "$1f"), ("([^aeiouy]|qu)ies$", "$1y"), ("(s)eries$", "$1eries"), ("(m)ovies$", "$1ovie"),
            ("(x|ch|ss|sh)es$", "$1"), ("^(m|l)ice$", "$1ouse"), ("(bus)(es)?$", "$1"), ("(o)es$", "$1"),
            ("(shoe)s$", "$1"), ("(cris|test)(is|es)$", "$1is"), ("^(a)x[ie]s$", "$1xis"),
            ("(octop|vir)(us|i)$", "$1us"), ("(alias|bias|canvas|focus|gas|lens|status)(es)?$", "$1"),
            ("^(ox)en", "$1"), ("(vert|ind)ices$", "$1ex"), ("(matr)ices$", "$1ix"), ("(quiz)zes$", "$1"),
            ("(database)s$", "$1"),
        ] {
            inflector.singular(pattern, template)
        }
        for (singular, plural) in [
            ("child", "children"), ("foot", "feet"), ("leaf", "leaves"), ("man", "men"), ("move", "moves"),
            ("person", "people"), ("sex", "sexes"), ("specimen", "specimens"), ("zombie", "zombies"),
        ] {
            inflector.irregular(singular, plural)
        }
        inflector.uncountable([
            "advice", "corps", "dice", "equipment", "fish", "information", "jeans", "kudos", "money", "news",
            "offspring", "police", "rice", "series", "sheep", "species",
        ])
        return inflector
    }()
}
