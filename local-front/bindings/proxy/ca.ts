import { createPrivateKey, generateKeyPair, randomBytes, sign, type KeyObject } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { rootCertificates } from "node:tls";
import { promisify } from "node:util";
import forge from "node-forge";

/** What a TLS server needs for one host name. */
export interface LeafCert {
  key: string;
  cert: string;
}

export interface ProxyCa {
  /** The CA certificate alone (PEM): what sessions are told to trust. */
  certPath: string;
  certPem: string;
  /** The system's roots and the CA in one file, for tools that read a single bundle. */
  bundlePath: string;
  /** Once the leaves' key is made: `leaf` may be called from then on. */
  ready: Promise<void>;
  /** A certificate for `host`, signed by the CA; made once per host and kept in memory. */
  leaf(host: string): LeafCert;
}

const CA_NAME = "agent-runtime credential proxy CA";

type KeyPair = { privatePem: string; publicKey: forge.pki.PublicKey; privateKey: KeyObject };

const generateRsa = promisify(generateKeyPair);

/**
 * node:crypto makes the key (forge's pure-JS RSA generation takes seconds), on libuv's
 * threads: a 2048-bit key takes 0.1 to 1 s, which the front's start spends meanwhile on
 * the rest; forge builds the certificates, node:crypto signs them (`signCertificate`).
 */
async function newKeyPair(): Promise<KeyPair> {
  const { privateKey } = await generateRsa("rsa", { modulusLength: 2048 });
  const privatePem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(privatePem) as forge.pki.rsa.PrivateKey;
  return { privatePem, privateKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

/**
 * Signs `cert` as forge's `cert.sign(key, sha256)` does, to the byte (RSASSA-PKCS1-v1_5
 * over SHA-256 is deterministic; `test/unit/proxy-ca.test.ts` holds the two equal), with
 * node:crypto: forge's JavaScript RSA took 70 to 110 ms of the front's thread a signature,
 * the CA's on a fresh data directory and each host's leaf on its first connection
 * (docs/performance.md, "Issue 32: the front's start, again"). forge computes the
 * certificate's to-be-signed part and hands the key its digest; this key signs that part.
 */
export function signCertificate(cert: forge.pki.Certificate, key: KeyObject): void {
  const signer = {
    sign: () => sign("sha256", Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), "binary"), key).toString("binary"),
  };
  cert.sign(signer as unknown as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
}

function serial(): string {
  // Positive, so the top bit of the first byte is clear.
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f;
  return bytes.toString("hex");
}

async function createCa(): Promise<{ keyPem: string; certPem: string }> {
  const keys = await newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600_000);
  const subject = [{ name: "commonName", value: CA_NAME }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  signCertificate(cert, keys.privateKey);
  return { keyPem: keys.privatePem, certPem: forge.pki.certificateToPem(cert) };
}

function isIp(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}

/**
 * The proxy's CA: read from `path` (one PEM file holding the certificate and its key),
 * or generated there on first start. The key never leaves that file (mode 0600); the
 * certificate alone is written beside it for sessions to trust.
 */
export async function loadOrCreateCa(path: string): Promise<ProxyCa> {
  // One key for every leaf, made beside the CA's, while the front goes on starting: the
  // leaves live in memory for this process only, and none is asked for before `ready`.
  let leafKeys: KeyPair | null = null;
  const ready = newKeyPair().then((k) => void (leafKeys = k));
  // Its failure is the start's, when the front awaits `ready`; until then it is no unhandled rejection.
  ready.catch(() => undefined);
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    const { keyPem, certPem } = await createCa();
    writeFileSync(path, certPem + keyPem, { mode: 0o600 });
  }
  const pem = readFileSync(path, "utf8");
  const certMatch = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  const keyMatch = /-----BEGIN (?:RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA )?PRIVATE KEY-----/.exec(pem);
  if (!certMatch || !keyMatch) throw new Error(`${path} must hold the CA certificate and its private key (PEM)`);
  const caCert = forge.pki.certificateFromPem(certMatch[0]);
  // node:crypto reads RSA keys in either encoding (PKCS#1 or PKCS#8), and any other type
  // too: an EC key would sign every leaf under the RSA algorithm the leaves name, each one
  // then refused by the sessions' TLS, so it is refused here, at the start.
  const caKey = createPrivateKey(keyMatch[0]);
  if (caKey.asymmetricKeyType !== "rsa") throw new Error(`${path}: the CA's private key must be RSA, not ${caKey.asymmetricKeyType}`);
  const certPem = `${certMatch[0]}\n`;
  const certPath = join(dirname(path), "ca-cert.pem");
  writeFileSync(certPath, certPem);
  chmodSync(certPath, 0o644);
  const bundlePath = writeTrustBundle(certPem, dirname(path));

  const leaves = new Map<string, LeafCert>();
  return {
    certPath,
    certPem,
    bundlePath,
    ready,
    leaf(host: string): LeafCert {
      const known = leaves.get(host);
      if (known) return known;
      if (!leafKeys) throw new Error("the proxy CA's leaf key is not made yet: await ready first");
      const cert = forge.pki.createCertificate();
      cert.publicKey = leafKeys.publicKey;
      cert.serialNumber = serial();
      cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
      cert.validity.notAfter = new Date(Date.now() + 90 * 24 * 3600_000);
      cert.setSubject([{ name: "commonName", value: host }]);
      cert.setIssuer(caCert.subject.attributes);
      cert.setExtensions([
        { name: "basicConstraints", cA: false },
        { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
        { name: "extKeyUsage", serverAuth: true },
        { name: "subjectAltName", altNames: [isIp(host) ? { type: 7, ip: host } : { type: 2, value: host }] },
      ]);
      signCertificate(cert, caKey);
      const made = { key: leafKeys.privatePem, cert: forge.pki.certificateToPem(cert) + certPem };
      leaves.set(host, made);
      return made;
    },
  };
}

/** Writes `ca-bundle.pem` in `dir`: the system's roots plus `certPem`. */
export function writeTrustBundle(certPem: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "ca-bundle.pem");
  writeFileSync(path, [...rootCertificates, certPem.trim()].join("\n") + "\n");
  return path;
}
