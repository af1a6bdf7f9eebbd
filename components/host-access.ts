import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import type { RegistryLogin } from "./registry-access";
import { type HostConnectionInput, dockerHostUrl, loginSudo, sshMaterialDir, sshOptions, writeSshMaterial } from "./transport";

/** The stack that owns a cluster: its project, its name and a token of its own (two stacks of one name differ). */
export interface ClusterOwner {
  project: string;
  stack: string;
  token: string;
}

/** What host-facts.sh reports. */
export interface HostFacts {
  user: string;
  uid: number;
  gid: number;
  hostname: string;
  dockerEngine: string;
  /** The owner recorded on the host (null: nobody). */
  owner: { project: string; stack: string; token: string } | null;
}

/** Where a host records which stack owns it. */
export const OWNER_FILE = "/var/lib/reprobench/owner.json";

export interface HostAccessArgs {
  /** SSH connection to the host (its private key a secret). */
  readonly connection: pulumi.Input<HostConnectionInput>;
  /** The stack claiming the host; a host another stack owns is refused before anything on it changes. */
  readonly owner: pulumi.Input<ClusterOwner>;
  /**
   * Registry accounts the Docker provider pulls as, should it pull a server image itself (image-digest.sh
   * pulls it first, with the same credentials); secret. Omitted: anonymous.
   */
  readonly registryLogins?: pulumi.Input<RegistryLogin[]>;
}

export interface HostRightsArgs {
  /** SSH connection to the host (its private key a secret). */
  readonly connection: pulumi.Input<HostConnectionInput>;
}

/**
 * The SSH login's rights on one host, checked as the login itself (host-rights.sh): root's (root, or
 * NOPASSWD sudo when hosts[].ssh.sudo) and the Docker socket's (the Docker provider dials it as the login,
 * where sudo cannot help). Changes nothing. A login lacking one fails here with one message naming the host
 * and what is missing; make every HostAccess depend on every host's HostRights (`dependsOn`) so that this happens
 * before any host changes. Read again on every refresh: rights lost since read as drift, and the next
 * `up` checks them again before anything else.
 */
export class HostRights extends pulumi.ComponentResource {
  constructor(name: string, args: HostRightsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:HostRights", name, {}, opts);
    const connection = pulumi.output(args.connection);
    const script = pulumi.all([connection.name, loginSudo(args.connection)]).apply(([host, sudo]) => scriptWithEnv("host-rights", { HOST_NAME: host, SUDO: sudo ? "1" : "0" }));
    new CheckedCommand(
      `${name}-check`,
      // Rights belong to the login: a new user or sudo setting is checked again (in place).
      { connection: args.connection, create: script, check: script, runAs: "login", rerunOnLogin: ["user", "sudo"], onDrift: "update", timeoutSeconds: 60 },
      { parent: this },
    );
    this.registerOutputs({});
  }
}

/**
 * One host as reprobench reaches it: the host claimed for the owning stack (refused, with nothing changed,
 * when another stack owns it), the facts every other component needs (the login's uid:gid, the engine's
 * version), read again on every refresh, and a `@pulumi/docker` provider that talks to the host's dockerd
 * over the same pinned SSH connection. Everything placed on the host depends on it, so the claim comes
 * first and the release last. BenchCluster makes the host's handle (components/host.ts) from it.
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
    const ownerEnv = pulumi.output(args.owner).apply((o) => ({ OWNER_JSON: JSON.stringify(o), OWNER_FILE }));
    const probe = new CheckedCommand(
      `${name}-facts`,
      {
        connection: args.connection,
        create: ownerEnv.apply((env) => scriptWithEnv("host-facts", { ...env, CLAIM: "1" })),
        check: ownerEnv.apply((env) => scriptWithEnv("host-facts", { ...env, CLAIM: "0" })),
        delete: ownerEnv.apply((env) => scriptWithEnv("host-release", env)),
        // The facts name the login's uid:gid: another user re-reads them (in place; the claim stays), and
        // containers that run as the login follow its uid — the one thing a login change may replace,
        // which preview shows as their `user` becoming unknown. A new key or sudo setting changes nothing.
        rerunOnLogin: ["user"],
        onDrift: "update",
        timeoutSeconds: 120,
      },
      // The claim waits for what the component depends on: every host's HostRights, so that a login
      // without its rights on any host stops `up` before any host is claimed or changed.
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.facts = probe.stdout.apply((s) => lastJsonLine<HostFacts>(s, "host-facts.sh"));
    this.loginUser = this.facts.apply((f) => `${f.uid}:${f.gid}`);
    // The provider takes key files, not key contents; without a key (a preview with no secrets set) it
    // gets none and is never dialled, since a preview contacts no host.
    const sshOpts = pulumi.unsecret(
      // Files named by the stack and the host, not the key: a rotated key rewrites them and leaves the
      // provider's configuration (and so every container under it) as it was.
      connection.apply((c) => (c.privateKey && c.hostKey ? sshOptions(writeSshMaterial(c, sshMaterialDir(), `${pulumi.getProject()}/${pulumi.getStack()}`)) : [])),
    );
    this.dockerProvider = new docker.Provider(
      `${name}-engine`,
      // Through the facts: no image is pulled before the host was claimed.
      // Through the claim's URN (known in previews, resolved once the claim succeeded): no image is pulled
      // before the host was claimed, and a re-read of the facts never makes the provider look changed.
      {
        host: pulumi.all([connection, probe.urn]).apply(([c]) => dockerHostUrl(c)),
        sshOpts,
        // Only when set: a stack without registry accounts keeps the provider configuration it had.
        ...(args.registryLogins !== undefined
          ? { registryAuth: pulumi.secret(pulumi.output(args.registryLogins).apply((logins) => logins.map((l) => ({ address: l.registry === "docker.io" ? "registry-1.docker.io" : l.registry, username: l.username, password: l.password })))) }
          : {}),
      },
      { parent: this },
    );
    this.registerOutputs({ facts: this.facts, loginUser: this.loginUser, dockerProvider: this.dockerProvider });
  }
}
