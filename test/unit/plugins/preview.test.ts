// During a preview, inputs computed from other resources arrive as the unknown sentinel; check must
// accept them (it cannot validate yet) instead of failing the preview.
import { describe, expect, it } from "vitest";
import { MemoryLog } from "../../../scripts/plugins/common/engine-log";
import { makeProvider } from "../../../scripts/plugins/common/provider";
import { UNKNOWN, wrapSecret } from "../../../scripts/plugins/common/wire";
import { commandPlugin } from "../../../scripts/plugins/command/plugin";
import { randomPlugin } from "../../../scripts/plugins/random/resources";

const INPUTS: Record<string, string[]> = {
  "command:remote:Command": ["connection", "create", "update", "delete", "environment", "stdin", "triggers", "logging", "addPreviousOutputInEnv"],
  "command:local:Command": ["create", "update", "delete", "environment", "stdin", "triggers", "logging", "addPreviousOutputInEnv", "dir", "interpreter", "assetPaths", "archivePaths"],
  "command:remote:CopyToRemote": ["connection", "remotePath", "source", "triggers"],
  "command:remote:CopyFile": ["connection", "localPath", "remotePath", "triggers"],
  "random:index/randomPassword:RandomPassword": ["length", "keepers", "special", "upper", "lower", "numeric", "number", "minUpper", "minLower", "minNumeric", "minSpecial", "overrideSpecial"],
  "random:index/randomString:RandomString": ["length", "keepers", "special", "overrideSpecial"],
  "random:index/randomId:RandomId": ["byteLength", "keepers", "prefix"],
  "random:index/randomInteger:RandomInteger": ["min", "max", "seed", "keepers"],
  "random:index/randomUuid:RandomUuid": ["keepers"],
};

const providers = [makeProvider(commandPlugin("1.2.1"), new MemoryLog()), makeProvider(randomPlugin("4.21.2"), new MemoryLog())];

describe("check during preview", () => {
  for (const [type, keys] of Object.entries(INPUTS)) {
    it(`accepts unknown values for every input of ${type}`, async () => {
      const provider = providers[type.startsWith("random:") ? 1 : 0];
      const urn = `urn:pulumi:dev::proj::${type}::x`;
      const allUnknown = Object.fromEntries(keys.map((k) => [k, UNKNOWN]));
      expect((await provider.check!(urn, {}, allUnknown)).failures).toEqual([]);
      const secretUnknown = Object.fromEntries(keys.map((k) => [k, wrapSecret(UNKNOWN)]));
      expect((await provider.check!(urn, {}, secretUnknown)).failures).toEqual([]);
    });
  }

  it("accepts a known connection whose fields are unknown", async () => {
    const conn = wrapSecret({ host: UNKNOWN, port: UNKNOWN, user: "root", privateKey: UNKNOWN, perDialTimeout: UNKNOWN, dialErrorLimit: 10, hostKey: UNKNOWN, proxy: UNKNOWN });
    const r = await providers[0].check!("urn:pulumi:dev::proj::command:remote:Command::x", {}, { connection: conn, create: "true" });
    expect(r.failures).toEqual([]);
  });
});
