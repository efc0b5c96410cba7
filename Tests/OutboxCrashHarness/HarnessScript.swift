import MonoRail

@Resource(name: "train")
final class HarnessTrain {
    var company: String?
    var numberOfCars: Int?
}

@Resource(name: "car")
final class HarnessCar {
    var occupancy: Int?
    @References var train: HarnessTrain?
}

/// The writes a run makes, the same for a seed every time: trains created, cars created on them,
/// both updated, cars deleted — and the server state they must leave.
struct HarnessScript {
    enum Step: Sendable, Hashable {
        case createTrain(Int)
        case createCar(Int, train: Int, occupancy: Int)
        case updateTrain(Int, numberOfCars: Int)
        case updateCar(Int, occupancy: Int)
        case deleteCar(Int)
    }

    /// Names this run's trains apart from the seeded ones and from other runs.
    let tag: String
    let steps: [Step]

    init(seed: UInt64, count: Int) {
        tag = String(seed, radix: 36)
        var random = SplitMix64(seed: seed)
        var trains = 0
        var cars = 0
        var liveCars: [Int] = []
        var steps: [Step] = []
        for _ in 0..<count {
            let roll = random.next() % 100
            if trains == 0 || roll < 15 {
                steps.append(.createTrain(trains))
                trains += 1
            } else if roll < 40 {
                // A car's occupancy starts at its number times 100, so each car is known by it.
                steps.append(.createCar(cars, train: Int(random.next() % UInt64(trains)), occupancy: cars * 100))
                liveCars.append(cars)
                cars += 1
            } else if roll < 65 || liveCars.isEmpty {
                steps.append(.updateTrain(Int(random.next() % UInt64(trains)), numberOfCars: Int(random.next() % 1001)))
            } else if roll < 90 {
                let car = liveCars[Int(random.next() % UInt64(liveCars.count))]
                steps.append(.updateCar(car, occupancy: car * 100 + Int(random.next() % 100)))
            } else {
                steps.append(.deleteCar(liveCars.remove(at: Int(random.next() % UInt64(liveCars.count)))))
            }
        }
        self.steps = steps
    }

    func company(_ train: Int) -> String { "H-\(tag)-t\(train)" }

    /// The server state every step applied once leaves: each train's number of cars by company,
    /// and each car still there as (its train's company, occupancy).
    var expected: (trains: [String: Int?], cars: [CarState]) {
        var trains: [Int: Int?] = [:]
        var cars: [Int: (train: Int, occupancy: Int)] = [:]
        for step in steps {
            switch step {
            case .createTrain(let train): trains[train] = .some(nil)
            case .createCar(let car, let train, let occupancy): cars[car] = (train, occupancy)
            case .updateTrain(let train, let count): trains[train] = count
            case .updateCar(let car, let occupancy): cars[car]?.occupancy = occupancy
            case .deleteCar(let car): cars[car] = nil
            }
        }
        return (
            Dictionary(uniqueKeysWithValues: trains.map { (company($0.key), $0.value) }),
            cars.values.map { CarState(company: company($0.train), occupancy: $0.occupancy) }.sorted()
        )
    }
}

struct CarState: Hashable, Comparable, CustomStringConvertible {
    var company: String
    var occupancy: Int

    static func < (lhs: CarState, rhs: CarState) -> Bool {
        (lhs.company, lhs.occupancy) < (rhs.company, rhs.occupancy)
    }

    var description: String { "\(company):\(occupancy)" }
}

/// A small, fast generator whose sequence a seed fixes (Steele, Lea and Flood's SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
