import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import { type HostConnectionInput, dockerHostUrl, sshOptions, writeSshMaterial } from "./ssh";

/** What host-facts.sh reports. */
export interface HostFacts {
  user: string;
  uid: number;
  gid: number;
  hostname: string;
  dockerEngine: string;
}

export interface HostAccessArgs {
  /** SSH connection to the host (its private key a secret). */
  readonly connection: pulumi.Input<HostConnectionInput>;
}

/**
 * One host as reprobench reaches it: the facts every other component needs (the login's uid:gid, the
 * engine's version), read again on every refresh, and a `@pulumi/docker` provider that talks to the host's
 * dockerd over the same pinned SSH connection. Pass `dockerProvider` to the components placed on the host.
 */
export class HostAccess extends pulumi.ComponentResource {
  /** The Docker engine of this host, over `ssh://`. */
  public readonly dockerProvider: docker.Provider;
  /** What the host reported; resolves once it answered over SSH. */
  public readonly facts: pulumi.Output<HostFacts>;
  /** "uid:gid" of the SSH login (seed 000 runs its containers as $(id -u):$(id -g)). */
  public readonly loginUser: pulumi.Output<string>;

  constructor(name: string, args: HostAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:HostAccess", name, {}, opts);
    const connection = pulumi.output(args.connection);
    const probe = new CheckedCommand(
      `${name}-facts`,
      {
        connection: args.connection,
        create: scriptWithEnv("host-facts", {}),
        check: scriptWithEnv("host-facts", {}),
        onDrift: "update",
        timeoutSeconds: 120,
      },
      { parent: this },
    );
    this.facts = probe.stdout.apply((s) => lastJsonLine<HostFacts>(s, "host-facts.sh"));
    this.loginUser = this.facts.apply((f) => `${f.uid}:${f.gid}`);
    // The provider takes key files, not key contents; without a key (a preview with no secrets set) it
    // gets none and is never dialled, since a preview contacts no host.
    const sshOpts = pulumi.unsecret(
      connection.apply((c) => (c.privateKey && c.hostKey ? sshOptions(writeSshMaterial(c)) : [])),
    );
    this.dockerProvider = new docker.Provider(
      `${name}-engine`,
      { host: connection.apply((c) => dockerHostUrl(c)), sshOpts },
      { parent: this },
    );
    this.registerOutputs({ facts: this.facts, loginUser: this.loginUser, dockerProvider: this.dockerProvider });
  }
}
