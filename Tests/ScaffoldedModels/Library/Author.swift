// Author: written by `monorail scaffold --openapi` from "Library". Edit freely; scaffold again to compare.
package import Foundation
package import MonoRail

@Resource
package final class Author {
    @Field(transform: .dateOnly) package var born: Date?
    package var createdAt: Date?
    package var name: String?
    @Has(route: ":path/:id/books") package var books: [Book]
}
