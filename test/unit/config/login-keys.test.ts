// The key a stack that does not own its cluster logs in with (components/config/login-keys.ts): its own
// sshPrivateKeys, then the owner's key file, then what an older owner exported; and the message without one.
import { describe, expect, it } from "vitest";
import { loginKeyFor, missingLoginKeyMessage } from "../../../components/config/login-keys";

describe("loginKeyFor", () => {
  it("prefers the stack's own key for the host, then its default, then the key file, then the exported key", () => {
    const sources = { ownKeys: { "worker-a": "own-a", default: "own-default" }, keyFiles: { "worker-a": "file-a", "worker-b": "file-b" }, exported: "exported" };
    expect(loginKeyFor("worker-a", sources)).toBe("own-a");
    expect(loginKeyFor("worker-b", sources)).toBe("own-default");
    expect(loginKeyFor("worker-b", { ...sources, ownKeys: {} })).toBe("file-b");
    expect(loginKeyFor("worker-c", { keyFiles: sources.keyFiles, exported: "exported" })).toBe("exported");
  });

  it("finds none in an empty exported key or nothing at all", () => {
    expect(loginKeyFor("worker-a", { exported: "" })).toBeUndefined();
    expect(loginKeyFor("worker-a", {})).toBeUndefined();
  });

  it("says how to give a host its key, for the stack named", () => {
    expect(missingLoginKeyMessage("worker-b", "local", "rehearsal")).toBe(
      "host worker-b: no SSH private key for this stack (stack 'local', which owns the cluster, exports none): pulumi config set --stack rehearsal --secret --path 'reprobench:sshPrivateKeys.worker-b' < KEYFILE (or sshPrivateKeys.default), or name the key file as hosts[].ssh.privateKeyFile in the owner's stack file",
    );
  });
});
