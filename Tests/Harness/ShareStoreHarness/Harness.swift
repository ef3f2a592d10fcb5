@main struct Harness { static func main() {} }
