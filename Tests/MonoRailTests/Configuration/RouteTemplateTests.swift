import MonoRail
import Testing

@Suite("Route templates")
struct RouteTemplateTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var template: String
        var placeholders: [String]
        var expanded: String?
        var testDescription: String { template }
    }

    static let values = ["path": "/trains", "plural": "trains", "singular": "train", "id": "5", "term": "a/b c"]

    static let cases: [Case] = [
        Case(template: ":path/:id", placeholders: ["path", "id"], expanded: "/trains/5"),
        Case(template: ":path/:id/", placeholders: ["path", "id"], expanded: "/trains/5/"),
        Case(template: "/:singular/:term", placeholders: ["singular", "term"], expanded: "/train/a%2Fb%20c"),
        // ApiModel's closing colon.
        Case(template: "/post/:id:.json", placeholders: ["id"], expanded: "/post/5.json"),
        Case(template: "/post/:id:", placeholders: ["id"], expanded: "/post/5"),
        Case(template: "/:plural:/:id:/edit", placeholders: ["plural", "id"], expanded: "/trains/5/edit"),
        // A colon that starts a name starts another placeholder.
        Case(template: "/trains/:id:cancel", placeholders: ["id", "cancel"], expanded: nil),
        // A colon that starts no name, with no placeholder before it, is text.
        Case(template: "/v1/: x", placeholders: [], expanded: "/v1/: x"),
        Case(template: "/posts.json", placeholders: [], expanded: "/posts.json"),
        Case(template: "/:unknown", placeholders: ["unknown"], expanded: nil),
    ]

    @Test("placeholders and expansion", arguments: cases)
    func expansion(_ row: Case) {
        let template = RouteTemplate(row.template)
        #expect(template.placeholders == row.placeholders)
        #expect(template.expand(Self.values)?.encoded == row.expanded)
        #expect(template.description == row.template)
    }
}
