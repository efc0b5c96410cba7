import Foundation
import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite("@Resource expansion")
struct ResourceMacroTests {
    static let source = """
        @Resource
        final class Train {
            var company: String?
            var numberOfCars = 0
            @Field(key: "top_speed", transform: .percentage) var maxSpeed: Double?
            @Ignored var note: String = ""
            var label: String { company ?? "" }
            static var shared = 1
        }
        """

    static let expanded = """
        final class Train {
            var company: String? {
                get {
                    _$state.value(\\.company, of: self, property: \\.company)
                }
                set {
                    _$state.setValue(newValue, for: \\.company, of: self, property: \\.company)
                }
            }
            var numberOfCars {
                init(initialValue) {
                }
                get {
                    _$state.value(\\.numberOfCars, of: self, property: \\.numberOfCars)
                }
                set {
                    _$state.setValue(newValue, for: \\.numberOfCars, of: self, property: \\.numberOfCars)
                }
            }
            var maxSpeed: Double? {
                get {
                    _$state.value(\\.maxSpeed, of: self, property: \\.maxSpeed)
                }
                set {
                    _$state.setValue(newValue, for: \\.maxSpeed, of: self, property: \\.maxSpeed)
                }
            }
            var note: String {
                init(initialValue) {
                }
                get {
                    _$state.value(\\.note, of: self, property: \\.note)
                }
                set {
                    _$state.setValue(newValue, for: \\.note, of: self, property: \\.note)
                }
            }
            var label: String { company ?? "" }
            static var shared = 1

            struct FieldValues: ResourceFieldValues {
                var company: String? = nil
                var numberOfCars: Int = 0
                var maxSpeed: Double? = nil
                var note: String = ""
                init() {
                }
                func _$sameFields(as _$other: FieldValues) -> FieldComparison {
                    var _$result = FieldComparison()
                    _$result.record(0, _$same(self.company, _$other.company))
                    _$result.record(1, _$same(self.numberOfCars, _$other.numberOfCars))
                    _$result.record(2, _$same(self.maxSpeed, _$other.maxSpeed))
                    return _$result
                }
                mutating func _$decodeField(_ _$index: Int, from _$source: FieldSource, with _$decoder: FieldDecoder) throws -> Bool {
                    switch _$index {
                    case 0:
                        self.company = try _$decoder.decodeOptional(_$source)
                    case 1:
                        self.numberOfCars = try _$decoder.decode(_$source)
                    default:
                        return false
                    }
                    return true
                }
            }

            let _$state = InstanceState<Train>()

            /// The server's id for this record: `nil` until the record exists on the server, then an
            /// integer or a string exactly as the server sent it.
            var id: ResourceID? {
                _$state.id(of: self)
            }

            static let resourceSchema = ModelSchema<Train>(
                typeName: "Train", name: nil, plural: nil, path: nil,
                fields: [
                        ResourceField("company", \\.company, \\.company),
                        ResourceField("numberOfCars", \\.numberOfCars, \\.numberOfCars),
                        ResourceField("maxSpeed", \\.maxSpeed, \\.maxSpeed, key: "top_speed", transform: .percentage),
                ],
                rewritesRecords: false
            )

            /// Returns the record unchanged: Train declares no `customDeserialize`.
            static func customDeserialize(_ record: JSONValue) throws -> JSONValue {
                record
            }
        }

        extension Train: ResourceModel, Sendable {
        }
        """

    @Test("fields become accessors into one record, with a schema and the conformance")
    func expansion() {
        expectExpansion(Self.source, expandsTo: Self.expanded)
    }

    @Test("a wrong expectation really fails")
    func wrongExpectationFails() {
        let wrong = Self.expanded.replacingOccurrences(of: "key: \"top_speed\"", with: "key: \"max_speed\"")
        #expect(!expansionFailures(Self.source, expandsTo: wrong).isEmpty)
    }

    @Test("naming arguments and public access carry into the generated members")
    func namingAndAccess() {
        let source = """
            @Resource(name: "locomotive", plural: "locomotives", path: "/fleet/locos")
            public final class Engine {
                public var power: Int?
                public init(power: Int) { self.power = power }
            }
            """
        let failures = expansionFailures(source, expandsTo: "")
        let actual = failures.joined(separator: "\n")
        #expect(actual.contains(#"name: "locomotive", plural: "locomotives", path: "/fleet/locos""#))
        #expect(actual.contains("public struct FieldValues: ResourceFieldValues"))
        #expect(actual.contains("public var id: ResourceID?"))
        #expect(actual.contains("public init() {"))
        #expect(actual.contains("public static func customDeserialize(_ record: JSONValue)"))
    }

    @Test("a public class without initializers gets a public init(): its implicit one is internal")
    func publicWithoutInitializers() {
        let exposed = expansionFailures(
            "@Resource\npublic final class Train {\n    public var company: String?\n}", expandsTo: "")
        // The class's members are indented once; the values' twice.
        #expect(exposed.joined(separator: "\n").contains("\n    public init() {"))
        let plain = expansionFailures("@Resource\nfinal class Train {\n    var company: String?\n}", expandsTo: "")
        #expect(!plain.joined(separator: "\n").contains("\n    init() {"))
    }

    @Test("a class that declares customDeserialize keeps it, and its schema says records are rewritten")
    func declaredHook() {
        let source = """
            @Resource
            final class Train {
                var company: String?
                static func customDeserialize(_ record: JSONValue) throws -> JSONValue { record }
            }
            """
        let actual = expansionFailures(source, expandsTo: "").joined(separator: "\n")
        #expect(actual.contains("rewritesRecords: true"))
        #expect(!actual.contains("declares no `customDeserialize`"))
    }
}

@Suite("@References and @Has expansion")
struct RelationshipMacroTests {
    @Test("relationships get storage, schema entries, accessors and a $ projection")
    func relationships() {
        let source = """
            @Resource
            final class Train {
                @Has(.embedsMany) var cars: [Car]
                @Has(.one, foreignKey: "locomotive_id") var conductor: Conductor?
                @References(key: "depot_ref") var depot: Depot?
                @References(.many) var yards: [Yard]
                @References(.embedsOne, idKey: "line_ref") var line: Line?
                @References(polymorphic: true) var subject: (any ResourceModel)?
            }
            """
        let actual = expansionFailures(source, expandsTo: "").joined(separator: "\n")
        for expected in [
            "var cars: [Car] = []", "var conductor: [Conductor] = []", "var depot: ResourceID? = nil",
            "var yards: [ResourceID] = []",
            #"ResourceField(embedding: "cars", \.cars, \.cars)"#,
            #"ResourceField(reference: "depot", \.depot, \.depot, key: "depot_ref")"#,
            #"ResourceField(references: "yards", \.yards, \.yards)"#,
            #"ResourceField(embeddedReference: "line", \.line, \.line, idKey: "line_ref")"#,
            "var subject: ResourceID? = nil", "var _subjectType: String? = nil",
            #"ResourceField(polymorphicID: "subject", \.subject, \._subjectType, \.subject)"#,
            #"ResourceField(polymorphicType: "subject", \._subjectType, \.subject)"#,
            #"_$state.polymorphic(\.subject, type: \._subjectType, of: self, property: \.subject)"#,
            "var $subject: Related<Train, (any ResourceModel)?>",
            #"for: \.conductor, of: self, property: \.conductor, foreignKey: "locomotive_id")"#,
            #"_$state.setEmbedded(newValue, for: \.cars, of: self, property: \.cars, foreignKey: nil, targets: newValue)"#,
            #"ResourceRelationship(has: "conductor", \.conductor, foreignKey: "locomotive_id", one: true)"#,
            #"_$state.embeddedMany(\.cars, of: self, property: \.cars, foreignKey: nil)"#,
            #"_$state.hasOne(\.conductor, of: self, property: \.conductor, foreignKey: "locomotive_id")"#,
            #"_$state.referenced(\.depot, of: self, property: \.depot)"#,
            #"_$state.setReferencedMany(newValue, for: \.yards, of: self, property: \.yards)"#,
            "var $cars: Related<Train, [Car]>", "var $conductor: Related<Train, Conductor?>",
        ] {
            #expect(actual.contains(expected), "missing: \(expected)")
        }
    }
}
