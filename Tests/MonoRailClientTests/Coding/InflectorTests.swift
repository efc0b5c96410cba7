import Foundation
import MonoRailClient
import Testing

/// Rails' own inflector cases (`inflector_test_cases.rb`), as GRDB ships them in
/// `Tests/GRDBTests/InflectionsTests.json` (MIT); copied into `Fixtures/`.
@Suite("Inflector")
struct InflectorTests {
    struct Cases: Decodable {
        var singularToPlural: [String: String]
        var irregularities: [String: String]

        enum CodingKeys: String, CodingKey {
            case singularToPlural = "SingularToPlural"
            case irregularities = "Irregularities"
        }
    }

    static let cases: Cases = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/InflectionsTests.json")
        do {
            return try JSONDecoder().decode(Cases.self, from: Data(contentsOf: url))
        } catch {
            Issue.record("cannot read the inflection cases: \(error)")
            return Cases(singularToPlural: [:], irregularities: [:])
        }
    }()

    @Test("every Rails singular pluralizes and singularizes back, also capitalized")
    func railsCases() {
        #expect(Self.cases.singularToPlural.count > 100)
        for (singular, plural) in Self.cases.singularToPlural {
            #expect(Inflector.english.pluralize(singular) == plural, "pluralize \(singular)")
            #expect(Inflector.english.singularize(plural) == singular, "singularize \(plural)")
            #expect(Inflector.english.pluralize(plural) == plural, "pluralize plural \(plural)")
            let capitalized = singular.prefix(1).uppercased() + singular.dropFirst()
            let capitalizedPlural = plural.prefix(1).uppercased() + plural.dropFirst()
            #expect(Inflector.english.pluralize(capitalized) == capitalizedPlural, "pluralize \(capitalized)")
        }
    }

    @Test("irregulars added at run time apply both ways, also as suffixes")
    func irregulars() {
        for (singular, plural) in Self.cases.irregularities {
            var inflector = Inflector.english
            inflector.irregular(singular, plural)
            #expect(inflector.pluralize(singular) == plural)
            #expect(inflector.singularize(plural) == singular)
            #expect(inflector.pluralize(plural) == plural)
            #expect(inflector.singularize(singular) == singular)
        }
    }

    @Test(
        "model names become resource names",
        arguments: [
            ("train_car", "train_cars"), ("person", "people"), ("salesperson", "salespeople"), ("bus", "buses"),
            ("status", "statuses"), ("sheep", "sheep"), ("", ""),
        ])
    func modelNames(singular: String, plural: String) {
        #expect(Inflector.english.pluralize(singular) == plural)
    }
}
