package import Foundation
package import MonoRail

/// The FastAPI app's models (`Tests/FastAPIInterop`), declared as the README's FastAPI walkthrough
/// declares them.
@Resource
package final class Author {
    package var name: String?
    package var born: Date?
    package var createdAt: Date?
    @Has(route: ":path/:id/books") package var books: [Book]
}

@Resource
package final class Book {
    package enum Genre: String, Codable, Sendable {
        case fiction
        case nonFiction = "non-fiction"
        case poetry
    }

    package struct Dimensions: Codable, Sendable, Hashable {
        package var width: Double
        package var height: Double

        package init(width: Double, height: Double) {
            self.width = width
            self.height = height
        }
    }

    package var title: String?
    @Field(transform: .dateOnly) package var published: Date?
    package var genre: Genre?
    package var price: Decimal?
    package var pages: Int?
    package var dimensions: Dimensions?
    @References package var author: Author?

    package static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.paging = .fastAPIPagination
    }
}
