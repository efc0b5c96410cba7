// The configuration of Trains: written by `monorail scaffold --openapi` from "Trains". Edit freely; scaffold again to compare.
package import Foundation
package import MonoRail

extension ServerConventions {
    /// "Trains", as its OpenAPI document describes it.
    package static let trains: ServerConventions = {
        var conventions = ServerConventions.djangoREST
        conventions.updateMethod = .patch
        conventions.sendsOnlyChanges = true
        conventions.orderParameter = "ordering"
        conventions.searchParameter = "search"
        conventions.filterStyle = .lookups
        conventions.paging = Paging(
            style: .pageNumbers(page: "page", size: "page_size"), totalCountKey: "count", nextKey: "next")
        return conventions
    }()
}

extension MonoRail.Configuration {
    /// Points this configuration at "Trains": its API root, its conventions and its key style.
    ///
    /// ```swift
    /// MonoRail.configure { $0.useTrains(apiRootURL: URL(string: "http://127.0.0.1:8000")!) }
    /// ```
    package mutating func useTrains(apiRootURL: URL) {
        self.apiRootURL = apiRootURL
        conventions = .trains
    }
}
