import { describe, expect, it } from "vitest";
import { hostKeyAlgorithms, parseHostKey, readConnection } from "../../../scripts/plugins/command/connection";

// A syntactically valid ed25519 public key blob (type string + 32 key bytes).
const blob = Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from("ssh-ed25519"), Buffer.from([0, 0, 0, 32]), Buffer.alloc(32, 7)]).toString("base64");

describe("hostKey parsing", () => {
  it("reads authorized_keys and known_hosts style lines", () => {
    expect(parseHostKey(`ssh-ed25519 ${blob} comment`).type).toBe("ssh-ed25519");
    expect(parseHostKey(`[10.0.0.1]:2222 ssh-ed25519 ${blob}`).blob.toString("base64")).toBe(blob);
  });

  it("rejects garbage, naming the problem", () => {
    expect(() => parseHostKey("")).toThrow(/hostKey is empty/);
    expect(() => parseHostKey("not a key")).toThrow(/not in authorized_keys format/);
    expect(() => parseHostKey(`ssh-rsa ${blob}`)).toThrow(/does not decode to a ssh-rsa key \(found "ssh-ed25519"\)/);
  });

  it("offers all RSA signature algorithms for an RSA key", () => {
    expect(hostKeyAlgorithms("ssh-rsa")).toEqual(["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]);
  });
});

describe("connection input", () => {
  it("applies the SDK defaults", () => {
    const { spec, failures } = readConnection({ host: "h" });
    expect(failures).toEqual([]);
    expect(spec).toMatchObject({ host: "h", port: 22, user: "root", dialErrorLimit: 10, perDialTimeout: 15 });
  });

  it("names each bad field", () => {
    const { failures } = readConnection({ host: 1, port: 70000, dialErrorLimit: -2, perDialTimeout: 0, proxy: { host: "b", proxy: { host: "c" } } });
    expect(failures.map((f) => f.property)).toEqual(["connection.host", "connection.port", "connection.dialErrorLimit", "connection.perDialTimeout", "connection.proxy.proxy"]);
  });
});
