import HummingbirdTLS
import NIOSSL

/// TLS terminated by the server itself (`serve --tls-cert-file/--tls-key-file`): HTTPS on its port, with
/// the certificate chain and private key read from PEM files at start. Without it the server speaks plain
/// HTTP and something in front of it must terminate TLS (docs/server.md, "TLS").
public struct ServerTLS: Sendable, Equatable {
    /// The PEM file of the server's certificate, followed by any intermediate certificates.
    public var certificateFile: String
    /// The PEM file of the certificate's private key (keep it mode 0600).
    public var privateKeyFile: String

    /// - Parameters:
    ///   - certificateFile: The PEM certificate chain, the server's certificate first.
    ///   - privateKeyFile: The PEM private key of that certificate.
    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }

    /// The server's TLS configuration (TLS 1.2 or later), with the files read and checked against each
    /// other now, so a wrong file stops the start instead of failing each handshake.
    /// - Throws: ``ServerStartError`` `invalidConfiguration` naming the file to fix (never its content).
    func serverConfiguration() throws(ServerStartError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw ServerStartError(
                .invalidConfiguration,
                "cannot read the TLS certificate file \(certificateFile): give a PEM certificate chain, the server's certificate first"
            )
        }
        guard !chain.isEmpty else {
            throw ServerStartError(
                .invalidConfiguration, "the TLS certificate file \(certificateFile) holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw ServerStartError(
                .invalidConfiguration,
                "cannot read the TLS private key file \(privateKeyFile): give the certificate's private key as PEM")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ServerStartError(
                .invalidConfiguration,
                "the TLS private key \(privateKeyFile) does not belong to the certificate in \(certificateFile)")
        }
        return configuration
    }
}
