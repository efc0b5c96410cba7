import Foundation
import TestModels
import TestServer
import Testing

@testable import MonoRail

/// MessagePack lists are decoded where their records lie instead of through a tree. Every test here
/// merges the same list once as JSON and once as MessagePack, into two stores, and compares: the
/// values, the errors and what was merged must be the same.
@Suite("MessagePack lists merge exactly as JSON lists")
struct PackedListTests {
    static let messagePack = "application/x-msgpack"

    static func store(_ change: (inout MonoRail.Configuration) -> Void = { _ in }) -> ResourceStore {
        var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
        change(&configuration)
        return ResourceStore(configuration: configuration)
    }

    /// The JSON body and the MessagePack body of the same document.
    static func bodies(_ json: String) throws -> (json: Data, packed: Data) {
        let tree = try JSONParser().parse(Data(json.utf8))
        return (Data(json.utf8), MessagePackWriter.serialize(tree))
    }

    /// Each schema field of a model as it would be sent, by name, for comparing instances.
    static func wireForm<Model: ResourceModel>(_ model: Model) throws -> [String: JSONValue] {
        let values = model._$state.snapshot().values
        let coder = FieldCoder(options: CodingOptions())
        var form: [String: JSONValue] = ["id": model.id.map { .string($0.description) } ?? .null]
        for field in Model.resourceSchema.fields where field.embedded == nil {
            form[field.name] = try field.encode(values, coder)
        }
        return form
    }

    /// Merges both bodies into fresh stores and returns the instances, in list order.
    static func mergeBoth<Model: ResourceModel>(
        _ type: Model.Type, json: Data, packed: Data,
        configure: (inout MonoRail.Configuration) -> Void = { _ in }
    ) throws -> (json: [Model], packed: [Model]) {
        let fromJSON = try Model.merge(listBody: json, in: store(configure))
        let fromPack = try Model.merge(listBody: packed, contentType: messagePack, in: store(configure))
        return (fromJSON, fromPack)
    }

    static let specimens = #"""
        {"specimens": [
         {"id": "s-1", "text": "hello", "int8": -128, "int16": 32767, "int32": -2147483648,
          "int64": 9223372036854775807, "uint": 42, "uint8": 255, "uint16": 65535, "uint32": 4294967295,
          "uint64": 18446744073709551615, "double": 46.8, "float": 1.5, "decimal": 12.34, "flag": true,
          "date": "2024-05-06T07:08:09.123Z", "link": "https://example.com/a?b=c",
          "uuid": "6F1E6D6A-7B3C-4E4B-9C1F-2A4B5C6D7E8F", "numbers": [1, 2, 3], "ratios": {"a": 0.5, "b": 2},
          "extra": {"nested": [1, "two", null]}, "livery": "blue", "other_livery": null,
          "depot": {"city": "Basel", "platforms": 12}, "depots": [{"city": "Bern", "platforms": 4}],
          "nickname": null, "count": 9, "unknown_field": [1, 2]},
         {"count": 3, "unknown": {"deep": [[[]]]}, "double": 7, "text": "Zoë 🚂", "id": 2, "flag": false,
          "date": 1700000000, "numbers": [], "depots": [], "livery": "red", "other_livery": "blue"},
         {"id": "s-3", "text": "", "double": -0.5, "date": null, "uuid": null, "nickname": "third",
          "extra": "plain", "depot": null, "float": 3},
         {"id": 4, "text": "repeated", "text": "last wins", "int8": 1.0, "uint8": 7, "double": 1e300}
        ]}
        """#

    @Test("every field type reads the same from MessagePack as from JSON, in any key order")
    func everyType() throws {
        let (json, packed) = try Self.bodies(Self.specimens)
        let merged = try Self.mergeBoth(Specimen.self, json: json, packed: packed)
        #expect(merged.json.count == 4 && merged.packed.count == 4)
        for (fromJSON, fromPack) in zip(merged.json, merged.packed) {
            #expect(try Self.wireForm(fromJSON) == Self.wireForm(fromPack))
        }
        // The values are the real ones, not merely the same in both.
        let second = merged.packed[1]
        #expect(second.id == 2 && second.text == "Zoë 🚂" && second.count == 3 && second.double == 7)
        #expect(second.date == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(second.otherLivery == .blue && second.int8 == 0)
        #expect(merged.packed[0].depot == Depot(city: "Basel", platforms: 12))
        #expect(merged.packed[0].uint64 == .max && merged.packed[0].int64 == .max)
        #expect(merged.packed[2].nickname == "third" && merged.packed[2].extra == "plain")
        #expect(merged.packed[3].int8 == 1 && merged.packed[3].double == 1e300)
    }

    @Test("MessagePack's own types read as their JSON forms: timestamps, binary, float 32, integer and repeated keys")
    func messagePackTypes() throws {
        let stamp = MessagePackTimestamp(seconds: 1_714_979_289, nanoseconds: 123_000_000)
        func record(_ id: Int64) -> MessagePackValue {
            var pairs = [
                MessagePackPair("id", .int(id)), MessagePackPair("date", .timestamp(stamp)),
                MessagePackPair("float", .float(2.5)), MessagePackPair("double", .float(0.25)),
                MessagePackPair("uint8", .uint(200)), MessagePackPair("text", .binary(Data([1, 2, 3]))),
            ]
            if id == 4 {
                // Integer keys are read as their decimal text, and of repeated keys the last one
                // counts, as in the JSON form.
                pairs.append(MessagePackPair(.int(7), "an integer key"))
                pairs.insert(MessagePackPair("text", "replaced"), at: 0)
            }
            return .map(pairs)
        }
        let document: MessagePackValue = .map([MessagePackPair("specimens", .array((1...4).map(record)))])
        let packed = MessagePackWriter.serialize(document)
        // What a JSON body of the same data holds.
        let json = try MessagePackReader().readJSON(packed).jsonData()
        let merged = try Self.mergeBoth(Specimen.self, json: json, packed: packed)
        for (fromJSON, fromPack) in zip(merged.json, merged.packed) {
            #expect(try Self.wireForm(fromJSON) == Self.wireForm(fromPack))
        }
        #expect(merged.packed.count == 4)
        #expect(merged.packed[2].date == stamp.date && merged.packed[2].float == 2.5)
        #expect(merged.packed[2].double == 0.25 && merged.packed[2].uint8 == 200)
        #expect(merged.packed[2].text == Data([1, 2, 3]).base64EncodedString())
        #expect(merged.packed[3].text == Data([1, 2, 3]).base64EncodedString())
    }

    @Test(
        "a bad record fails the whole list with the error JSON gives, and nothing is merged",
        arguments: [
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": 3, "int8": "x"}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": 3, "int8": 300}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"int8": 3}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": true}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": 1}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": 3, "depot": {"city": 5, "platforms": 1}}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": 3, "livery": "green"}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, {"id": 3, "date": "yesterday"}]}"#,
            #"{"specimens": [{"id": 1}, {"id": 2}, 7]}"#,
            #"{"specimens": {"id": 1}}"#,
            #"{"errors": {"text": ["is wrong"]}}"#,
        ])
    func badRecords(_ body: String) throws {
        let (json, packed) = try Self.bodies(body)
        let jsonStore = Self.store()
        let packedStore = Self.store()
        let jsonError = #expect(throws: APIError.self) { try Specimen.merge(listBody: json, in: jsonStore) }
        let packedError = #expect(throws: APIError.self) {
            try Specimen.merge(listBody: packed, contentType: Self.messagePack, in: packedStore)
        }
        #expect(packedError?.code == jsonError?.code)
        #expect(packedError?.message == jsonError?.message)
        #expect(packedError?.decodingFailure?.path == jsonError?.decodingFailure?.path)
        #expect(jsonStore.count == 0 && packedStore.count == 0)
    }

    @Test(
        "MessagePack values no field can hold fail the list, read in place or through the tree",
        arguments: [
            ("date", MessagePackValue.double(.nan)), ("date", .double(.infinity)), ("date", .double(1e19)),
            ("date", .timestamp(MessagePackTimestamp(seconds: .max))), ("date", .int(.min)),
            ("decimal", .double(.infinity)), ("decimal", .double(.nan)), ("decimal", .float(-.infinity)),
            ("int64", .double(9.3e18)), ("int8", .float(.nan)), ("count", .double(0.5)),
        ])
    func unrepresentable(field: String, value: MessagePackValue) throws {
        func record(_ id: Int64) -> MessagePackValue {
            .map([MessagePackPair("id", .int(id))] + (id == 3 ? [MessagePackPair(.string(field), value)] : []))
        }
        let packed = MessagePackWriter.serialize(["specimens": .array((1...3).map(record))])
        let store = Self.store()
        let error = #expect(throws: APIError.self, "\(value)") {
            try Specimen.merge(listBody: packed, contentType: Self.messagePack, in: store)
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.path == "$.specimens[2].\(field)", "\(String(describing: error))")
        #expect(store.count == 0)
    }

    @Test("the model's policy hooks apply alike: required fields, custom assignment, lenient coercion")
    func policies() throws {
        let strict = try Self.bodies(
            #"{"trains": [{"id": 1, "company": "A", "status": 1}, {"id": 2, "company": "B", "status": "retired"},"#
                + #" {"id": 3, "company": "C", "status": 0, "number_of_cars": "many"}]}"#)
        let merged = try Self.mergeBoth(StrictCompanyTrain.self, json: strict.json, packed: strict.packed)
        #expect(merged.packed.map(\.status) == [.retired, .retired, .active])
        #expect(merged.packed.map(\.numberOfCars) == [0, 0, 0])
        for (fromJSON, fromPack) in zip(merged.json, merged.packed) {
            #expect(try Self.wireForm(fromJSON) == Self.wireForm(fromPack))
        }
        let missing = try Self.bodies(#"{"trains": [{"id": 1, "company": "A"}, {"id": 2}, {"id": 3, "company": "C"}]}"#)
        let jsonError = #expect(throws: APIError.self) {
            try StrictCompanyTrain.merge(listBody: missing.json, in: Self.store())
        }
        let packedError = #expect(throws: APIError.self) {
            try StrictCompanyTrain.merge(listBody: missing.packed, contentType: Self.messagePack, in: Self.store())
        }
        #expect(packedError?.message == jsonError?.message && packedError?.message.contains("company") == true)

        let lenient = try Self.bodies(
            #"{"trains": [{"id": 1, "number_of_cars": "12"}, {"id": 2, "number_of_cars": 3.0, "in_service": "yes"},"#
                + #" {"id": 3, "company": 42, "in_service": 1}]}"#)
        let coerced = try Self.mergeBoth(LenientTrain.self, json: lenient.json, packed: lenient.packed)
        #expect(coerced.packed.map(\.numberOfCars) == [12, 3, nil])
        #expect(coerced.packed.map(\.company) == [nil, nil, "42"])
        #expect(coerced.packed.map(\.inService) == [false, true, true])
    }

    @Test("a model that rewrites records gets every record of a MessagePack list as a tree")
    func customDeserialize() throws {
        let (json, packed) = try Self.bodies(
            #"{"trains": [{"id": 1, "info": {"name": "One"}}, {"id": 2, "info": {"name": "Two"}},"#
                + #" {"id": 3, "info": {"name": "Three"}}]}"#)
        let merged = try Self.mergeBoth(CustomTrain.self, json: json, packed: packed)
        #expect(merged.json.map(\.company) == ["One", "Two", "Three"])
        #expect(merged.packed.map(\.company) == ["One", "Two", "Three"])

        // Embedded records of a model that keeps the default hook are decoded inside the first
        // record; they must not make the train look as if it kept it too.
        let nested = try Self.bodies(
            #"{"trains": [{"id": 1, "info": {"name": "One"}, "cars": [{"id": 10, "occupancy": 2}]},"#
                + #" {"id": 2, "info": {"name": "Two"}, "cars": []}, {"id": 3, "info": {"name": "Three"}}]}"#)
        let rewritten = try Self.mergeBoth(RewritingTrain.self, json: nested.json, packed: nested.packed)
        #expect(rewritten.json.map(\.company) == ["One", "Two", "Three"])
        #expect(rewritten.packed.map(\.company) == ["One", "Two", "Three"])
        #expect(rewritten.packed[0].cars.map(\.occupancy) == [2])
        // The macro saw which classes declare the hook.
        #expect(RewritingTrain.resourceSchema.rewritesRecords && CustomTrain.resourceSchema.rewritesRecords)
        #expect(!Train.resourceSchema.rewritesRecords && !Spec.Car.resourceSchema.rewritesRecords)
    }

    @Test("bare lists, namespaces and side-loaded records beside the list")
    func envelopes() throws {
        let bare = try Self.bodies(#"[{"id": 1, "company": "A"}, {"id": 2, "company": "B"}, {"id": 3}]"#)
        let bareMerged = try Self.mergeBoth(Train.self, json: bare.json, packed: bare.packed)
        #expect(bareMerged.packed.map(\.company) == ["A", "B", nil])

        let namespaced = try Self.bodies(
            #"{"meta": {"page": 1}, "data": {"trains": [{"id": 1, "company": "A"}, {"id": 2}, {"id": 3}]}}"#)
        let inNamespace = try Self.mergeBoth(Train.self, json: namespaced.json, packed: namespaced.packed) {
            $0.conventions.rootNamespace = "data"
        }
        #expect(inNamespace.packed.map(\.company) == ["A", nil, nil])

        // The list key first, then side-loads after it: the reader must step over the list.
        let sideLoaded = try Self.bodies(
            #"{"trains": [{"id": 1, "company": "A"}, {"id": 2, "company": "B"}, {"id": 3, "company": "C"}],"#
                + #" "cars": [{"id": 10, "occupancy": 4, "train_id": 3}], "wagons": [1]}"#)
        let store = Self.store()
        let trains = try Seed.Train.merge(listBody: sideLoaded.packed, contentType: Self.messagePack, in: store)
        #expect(trains.map(\.company) == ["A", "B", "C"])
        #expect(trains[2].cars.map(\.occupancy) == [4])
        #expect(trains[2].cars.first?.train === trains[2])
    }

    @Test(
        "malformed MessagePack anywhere in a list is a typed error, even where no field is read",
        arguments: [
            "invalid UTF-8 in an ignored value", "invalid UTF-8 in an ignored key", "an unknown extension",
            "truncated", "trailing bytes", "nesting past the limit", "a map key that is an array",
        ])
    func malformed(_ flaw: String) throws {
        func record(_ id: Int64, extra: MessagePackValue = .nil) -> MessagePackValue {
            .map([MessagePackPair("id", .int(id)), MessagePackPair("company", "ok"), MessagePackPair("x", extra)])
        }
        var deep: MessagePackValue = .array([])
        for _ in 0..<600 { deep = .array([deep]) }
        var records = [record(1), record(2), record(3)]
        switch flaw {
        case "an unknown extension": records[2] = record(3, extra: .extension(type: 5, data: Data([1])))
        case "nesting past the limit": records[2] = record(3, extra: deep)
        case "a map key that is an array":
            records[2] = .map([MessagePackPair("id", .int(3)), MessagePackPair(.array([]), "v")])
        default: break
        }
        var bytes = [UInt8](MessagePackWriter.serialize(.map([MessagePackPair("trains", .array(records))])))
        func replace(_ text: String, with raw: [UInt8]) {
            let needle = [UInt8](text.utf8)
            guard
                let start = (0...(bytes.count - needle.count)).last(where: {
                    bytes[$0..<($0 + needle.count)].elementsEqual(needle)
                })
            else { return }
            bytes.replaceSubrange(start..<(start + needle.count), with: raw)
        }
        switch flaw {
        case "invalid UTF-8 in an ignored value":
            bytes = [UInt8](
                MessagePackWriter.serialize(
                    .map([MessagePackPair("trains", .array([record(1), record(2), record(3, extra: "zzzz")]))])))
            replace("zzzz", with: [0xff, 0xfe, 0xfd, 0xfc])
        case "invalid UTF-8 in an ignored key": replace("x", with: [0xff])
        case "truncated": bytes.removeLast(2)
        case "trailing bytes": bytes.append(0xc0)
        default: break
        }
        let store = Self.store()
        let existing = try Train.merge(recordBody: Data(#"{"id": 3, "company": "before"}"#.utf8), in: store)
        let error = #expect(throws: APIError.self) {
            try Train.merge(listBody: Data(bytes), contentType: Self.messagePack, in: store)
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.message.contains("not valid MessagePack") == true, "\(error?.message ?? "")")
        #expect(existing.company == "before" && store.count == 1)
    }
}

/// Rewrites its records and embeds cars, which keep the default hook: the cars' records are read in
/// place, the train's each go through the hook.
@Resource(name: "train")
final class RewritingTrain {
    var company: String?
    @Has(.embedsMany) var cars: [Spec.Car]

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue {
        guard case .object(var object) = record, case .object(let info)? = object["info"] else { return record }
        object["company"] = info["name"]
        return .object(object)
    }
}
