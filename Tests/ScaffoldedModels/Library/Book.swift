// Book: written by `monorail scaffold --openapi` from "Library". Edit freely; scaffold again to compare.
package import Foundation
package import MonoRail

@Resource
package final class Book {
    @References package var author: Author?
    package var dimensions: Dimensions?
    package var genre: Genre?
    package var pages: Int?
    package var price: Decimal?
    @Field(transform: .dateOnly) package var published: Date?
    package var title: String?

    package static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.paging = Paging(
            style: .pageNumbers(page: "page", size: "size"), totalCountKey: "total")
    }
}

package struct Dimensions: Codable, Sendable, Hashable {
    package var height: Double
    package var width: Double

    package init(height: Double, width: Double) {
        self.height = height
        self.width = width
    }
}

package enum Genre: String, Codable, Sendable, CaseIterable {
    case fiction = "fiction"
    case nonFiction = "non-fiction"
    case poetry = "poetry"
}
