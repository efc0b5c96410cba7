// The configuration of Library: written by `monorail scaffold --openapi` from "Library". Edit freely; scaffold again to compare.
package import Foundation
package import MonoRail

extension ServerConventions {
    /// "Library", as its OpenAPI document describes it.
    package static let library: ServerConventions = {
        var conventions = ServerConventions.fastAPI
        conventions.updateMethod = .patch
        conventions.sendsOnlyChanges = true
        conventions.filterStyle = .lookups
        conventions.validationStatuses = [422]
        conventions.paging = Paging(
            style: .offsets(limit: "limit", offset: "offset"))
        return conventions
    }()
}

extension MonoRail.Configuration {
    /// Points this configuration at "Library": its API root, its conventions and its key style.
    ///
    /// ```swift
    /// MonoRail.configure { $0.useLibrary(apiRootURL: URL(string: "http://127.0.0.1:8000")!) }
    /// ```
    package mutating func useLibrary(apiRootURL: URL) {
        self.apiRootURL = apiRootURL
        conventions = .library
    }
}
