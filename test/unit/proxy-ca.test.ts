import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { loadOrCreateCa, signCertificate } from "../../local-front/bindings/proxy/ca.js";

function certificate(publicKey: forge.pki.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = "0badc0ffee";
  cert.validity.notBefore = new Date("2026-01-01T00:00:00Z");
  cert.validity.notAfter = new Date("2036-01-01T00:00:00Z");
  cert.setSubject([{ name: "commonName", value: "proxy-ca test" }]);
  cert.setIssuer([{ name: "commonName", value: "proxy-ca test" }]);
  cert.setExtensions([{ name: "basicConstraints", cA: true, critical: true }, { name: "subjectKeyIdentifier" }]);
  return cert;
}

describe("the proxy CA's signatures, made with node:crypto", () => {
  it("are forge's own signatures to the byte, and verify", () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const forgeKey = forge.pki.privateKeyFromPem(privateKey.export({ type: "pkcs8", format: "pem" }).toString()) as forge.pki.rsa.PrivateKey;
    const publicKey = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
    const ours = certificate(publicKey);
    signCertificate(ours, privateKey);
    const forges = certificate(publicKey);
    forges.sign(forgeKey, forge.md.sha256.create());
    expect(forge.pki.certificateToPem(ours)).toBe(forge.pki.certificateToPem(forges));
    const read = forge.pki.certificateFromPem(forge.pki.certificateToPem(ours));
    expect(read.verify(read)).toBe(true);
  });

  it("refuse a CA whose key is not RSA, at the start rather than in every session's TLS", async () => {
    const dir = mkdtempSync(join(tmpdir(), "proxy-ca-"));
    try {
      const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const forgeKey = forge.pki.privateKeyFromPem(rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString()) as forge.pki.rsa.PrivateKey;
      const cert = certificate(forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e));
      cert.sign(forgeKey, forge.md.sha256.create());
      const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      writeFileSync(join(dir, "ca.pem"), forge.pki.certificateToPem(cert) + ec);
      await expect(loadOrCreateCa(join(dir, "ca.pem"))).rejects.toThrow(/must be RSA, not ec/);
      writeFileSync(join(dir, "ca.pem"), forge.pki.certificateToPem(cert) + rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString());
      const ca = await loadOrCreateCa(join(dir, "ca.pem"));
      await ca.ready;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
