// Rules of docker.addressPools: valid, apart from each other and the hosts, and enough networks for the
// concurrent trials.
import { type ReprobenchConfig, cidrContains, parseCidr, parseIpv4 } from "../schema";
import { type ConfigProblem, problem } from "../problems";

export function addressPoolProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const pools = config.docker.addressPools.map((p) => ({ ...p, cidr: parseCidr(p.base)! }));
  let networks = 0;
  pools.forEach((pool, i) => {
    if (pool.size < pool.cidr.prefix) {
      out.push(problem(["docker", "addressPools", i, "size"], `got ${pool.size}; expected a prefix length ≥ ${pool.cidr.prefix} (networks are carved out of ${pool.base})`));
      return;
    }
    networks += 2 ** (pool.size - pool.cidr.prefix);
    for (let j = 0; j < i; j++) {
      const other = pools[j].cidr;
      if (cidrContains(other, pool.cidr.network) || cidrContains(pool.cidr, other.network)) {
        out.push(problem(["docker", "addressPools", i, "base"], `got ${JSON.stringify(pool.base)}; expected a range that does not overlap docker.addressPools[${j}] (${pools[j].base})`));
      }
    }
    for (const host of config.hosts) {
      const ip = parseIpv4(host.privateIp)!;
      if (cidrContains(pool.cidr, ip)) {
        out.push(problem(["docker", "addressPools", i, "base"], `got ${JSON.stringify(pool.base)}; expected a range that does not contain host ${host.name}'s privateIp ${host.privateIp}`));
      }
    }
  });
  // Harbor makes one network per running trial (seed: "all predefined address pools have been fully subnetted").
  if (out.length === 0 && networks < config.run.nConcurrentTrials) {
    out.push(problem(["docker", "addressPools"], `the pools provide ${networks} network${networks === 1 ? "" : "s"}; expected at least run.nConcurrentTrials = ${config.run.nConcurrentTrials} (one network per running trial)`));
  }
  return out;
}
