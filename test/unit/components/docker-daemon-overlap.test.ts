// The live overlap check inside docker-daemon.sh (python on the host), run here on recorded
// `ip -j route` / `docker network inspect` output.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hostScript } from "../../../components/host-script";

function overlapCheck(routes: object[], networks: string, pools: object[]): { code: number; stderr: string } {
  const script = hostScript("docker-daemon");
  const marker = "<<'PY' || exit 1\n";
  const start = script.indexOf(marker) + marker.length;
  const python = script.slice(start, script.indexOf("\nPY\n", start));
  const dir = mkdtempSync(join(tmpdir(), "overlap-"));
  writeFileSync(join(dir, "routes.json"), JSON.stringify(routes));
  writeFileSync(join(dir, "networks.txt"), networks);
  const r = spawnSync("python3", ["-c", python, join(dir, "routes.json"), join(dir, "networks.txt")], {
    env: { ...process.env, POOLS_JSON: JSON.stringify(pools) },
    encoding: "utf8",
  });
  return { code: r.status ?? -1, stderr: r.stderr };
}

const SEED_POOL = [{ base: "172.18.0.0/15", size: 24 }];

describe("docker-daemon.sh overlap check", () => {
  it("refuses a route of another device and a docker network of another size inside the pool", () => {
    const r = overlapCheck(
      [{ dst: "default", dev: "eth0" }, { dst: "172.19.5.0/24", dev: "tun0" }],
      "legacy 172.19.0.0/16 \n",
      SEED_POOL,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("pool 172.18.0.0/15 overlaps route 172.19.5.0/24 dev tun0");
    expect(r.stderr).toContain("pool 172.18.0.0/15 overlaps docker network legacy (172.19.0.0/16)");
  });

  it("accepts docker0 and networks that are single /size blocks of the pool (allocated from it before)", () => {
    const r = overlapCheck([{ dst: "172.18.0.0/24", dev: "docker0" }, { dst: "172.18.3.0/24", dev: "br-0a1b2c" }], "bridge 172.18.0.0/24 \nharbor 172.18.3.0/24 \n", SEED_POOL);
    expect(r).toEqual({ code: 0, stderr: "" });
  });

  it("still refuses a non-docker route shaped like a pool block (a VPN /24 inside the pool)", () => {
    const r = overlapCheck([{ dst: "172.18.9.0/24", dev: "wg0" }], "", SEED_POOL);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("overlaps route 172.18.9.0/24 dev wg0");
  });

  it("ignores IPv6, local and broadcast routes", () => {
    const r = overlapCheck([{ dst: "fe80::/64", dev: "eth0" }, { dst: "172.18.0.1", type: "local", dev: "docker0" }, { dst: "172.18.255.255", type: "broadcast", dev: "x" }], "", SEED_POOL);
    expect(r.code).toBe(0);
  });
});
