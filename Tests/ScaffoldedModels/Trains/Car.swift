// Car: written by `monorail scaffold --openapi` from "Trains". Edit freely; scaffold again to compare.
package import MonoRail

@Resource
package final class Car {
    package var needsRepairs: Bool?
    package var occupancy: Int?
    @References package var train: Train?
}
