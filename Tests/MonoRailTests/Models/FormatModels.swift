import Foundation
import MonoRail

/// A train whose model alone speaks MessagePack, whatever the store's format.
@Resource(name: "train")
final class PackedTrain {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var builtAt: Date?
    var tags: [String] = []

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.format = .messagePack
    }
}

/// A conductor with a photo: sent as `multipart/form-data` while the photo has bytes to upload.
@Resource(name: "conductor")
final class PhotoConductor {
    var name: String?
    var photo: FileUpload?
    var trainId: Int?
}

/// ApiModel's `UserAvatar`: a file posted to an upload endpoint that answers a record with no id,
/// `{"upload": {"filename": …, "size": …, "sha256": …, "url": …}}`.
@Resource(name: "upload", plural: "uploads", path: "/upload")
final class Avatar {
    var file: FileUpload?
    var filename: String?
    var size: Int?
    var sha256: String?
    var url: String?
}
