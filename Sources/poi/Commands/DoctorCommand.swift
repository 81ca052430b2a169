import ArgumentParser
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "doctor")
    func run() async throws {}
}
