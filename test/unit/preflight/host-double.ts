// A host for the preflight's host scripts, in a temp dir: stand-ins for nvidia-smi, docker and systemctl on
// PATH that print what the real tools print (recorded formats, reference gpus.md §1/§2a), and model
// directories in Hugging Face layout with real safetensors headers. Runs preflight-weights.sh +
// preflight-host.sh with bash, as `up` and `check` do over SSH.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { envPrelude } from "../../../components/host-script";

const REPO = path.resolve(__dirname, "../../..");
const script = (n: string) => readFileSync(path.join(REPO, "components/scripts", `${n}.sh`), "utf8");

export interface GpuState {
  count: number;
  name: string;
  memoryMiB: number;
  driver: string;
  cuda: string;
  /** GPU index → MiB used, by pid:name. */
  busy: { gpu: number; mib: number; pid: number; name: string }[];
  mig: number[];
  toolkit: "present" | "absent";
  /** The image's NVIDIA_REQUIRE_CUDA (cuda>=X.Y). */
  imageRequiresCuda: string;
  fabricManager: "active" | "inactive";
}

export const DEFAULT_GPUS: GpuState = {
  count: 8, name: "NVIDIA A100-SXM4-40GB", memoryMiB: 40960, driver: "580.95.05", cuda: "13.0", busy: [], mig: [], toolkit: "present", imageRequiresCuda: "13.0", fabricManager: "active",
};

const uuid = (i: number) => `GPU-3b9c5a4e-8f1d-2c7e-9a6b-1d4f5e6a7b${String(i).padStart(2, "0")}`;

/** The recorded answers of the real tools for a GPU state. */
export function smiAnswers(g: GpuState): { query: string; apps: string; list: string; report: string } {
  const rows = [...Array(g.count).keys()].map((i) => {
    const used = 4 + g.busy.filter((b) => b.gpu === i).reduce((s, b) => s + b.mib, 0);
    return `${i}, ${uuid(i)}, ${g.name}, 00000000:${(7 + i * 8).toString(16).toUpperCase().padStart(2, "0")}:00.0, ${g.memoryMiB}, ${used}, ${g.driver}, Default, ${g.mig.includes(i) ? "Enabled" : "Disabled"}, Enabled, 0`;
  });
  const apps = g.busy.map((b) => `${uuid(b.gpu)}, ${b.pid}, ${b.name}, ${b.mib}`);
  const list = [...Array(g.count).keys()].flatMap((i) => [`GPU ${i}: ${g.name} (UUID: ${uuid(i)})`, ...(g.mig.includes(i) ? [`  MIG 3g.20gb     Device  0: (UUID: MIG-${uuid(i).slice(4)})`] : [])]);
  const report = `==============NVSMI LOG==============\n\nTimestamp                                 : Tue Dec  2 10:00:00 2026\nDriver Version                            : ${g.driver}\nCUDA Version                              : ${g.cuda}\n`;
  return { query: rows.join("\n"), apps: apps.join("\n"), list: list.join("\n"), report };
}

/** docker run's answer for the state: the real daemon's and toolkit hook's messages. */
export function dockerRunAnswer(g: GpuState): { rc: number; out: string; err: string } {
  if (g.toolkit === "absent") return { rc: 125, out: "", err: 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n\nRun \'docker run --help\' for more information' };
  if (Number(g.imageRequiresCuda) > Number(g.cuda)) {
    return {
      rc: 125,
      out: "",
      err: `docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: cuda>=${g.imageRequiresCuda}, please update your driver to a newer version, or use an earlier cuda container: unknown.`,
    };
  }
  return { rc: 0, out: smiAnswers(g).list, err: "" };
}

export class HostDouble {
  readonly dir = mkdtempSync(path.join(tmpdir(), "preflight-host-"));
  readonly bin = path.join(this.dir, "bin");
  gpus: GpuState = structuredClone(DEFAULT_GPUS);
  /** What `ss -Hltnp` prints. */
  ss = "";

  constructor() {
    mkdirSync(this.bin);
  }

  /** Writes the stand-ins for the current state. */
  private writeTools(): void {
    const a = smiAnswers(this.gpus);
    const run = dockerRunAnswer(this.gpus);
    const files: Record<string, string> = {
      "smi-query": a.query, "smi-apps": a.apps, "smi-list": a.list, "smi-report": a.report, "run-out": run.out, "run-err": run.err, ss: this.ss,
    };
    for (const [k, v] of Object.entries(files)) writeFileSync(path.join(this.dir, k), v ? `${v}\n` : "");
    const d = this.dir;
    const exe = (name: string, text: string) => {
      writeFileSync(path.join(this.bin, name), `#!/usr/bin/env bash\n${text}\n`);
      chmodSync(path.join(this.bin, name), 0o755);
    };
    exe("nvidia-smi", `case "$*" in *--query-gpu=*) cat ${d}/smi-query ;; *--query-compute-apps=*) cat ${d}/smi-apps ;; -L) cat ${d}/smi-list ;; -q) cat ${d}/smi-report ;; esac`);
    exe("docker", [
      'case "$1" in',
      "  version) echo 26.1.5 ;;",
      "  inspect) echo 'Error: No such object' >&2; exit 1 ;;",
      "  image) exit 0 ;;",
      `  run) for a in "$@"; do [ "$a" = python3 ] && { echo 'docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "python3": executable file not found in $PATH: unknown.' >&2; exit 127; }; done`,
      `       cat ${d}/run-out; cat ${d}/run-err >&2; exit ${run.rc} ;;`,
      "esac",
    ].join("\n"));
    exe("systemctl", `[ "$1" = is-active ] && { echo ${this.gpus.fabricManager}; [ ${this.gpus.fabricManager} = active ]; exit; }; [ "$1" = list-unit-files ] && { echo 'nvidia-fabricmanager.service enabled enabled'; exit 0; }; exit 0`);
    exe("ss", `cat ${d}/ss`);
    // Tools the host scripts call that this machine may lack: present as on a prepared host.
    for (const t of ["jq", "curl", "python3", "ip", "sha256sum", "base64", "ps", "socat", "git", "systemd-run", "skopeo", "flock", "xargs", "tmux", "ldd"]) {
      if (!existsSync(`/usr/bin/${t}`) && !existsSync(`/bin/${t}`) && !this.missing.includes(t)) exe(t, "exit 0");
    }
  }

  /** Tools left off this host. */
  missing: string[] = [];

  /** Runs the preflight's scripts as `up`/`check` send them, with `env`; the report line. */
  run(env: Record<string, string>): string {
    this.writeTools();
    const text = `${envPrelude(env)}\n${script("preflight-weights")}\n${script("preflight-host")}`;
    return execFileSync("bash", ["-c", text], { env: { PATH: `${this.bin}:/usr/bin:/bin`, HOME: this.dir, LC_ALL: "C" }, encoding: "utf8" });
  }

  /** A model directory in Hugging Face layout: config.json, tokenizer, index, shards with real headers (sparse). */
  model(name = "model", o: { shards?: number; layers?: number } = {}): string {
    const dir = path.join(this.dir, name);
    mkdirSync(dir, { recursive: true });
    const shards = o.shards ?? 4;
    const weightMap: Record<string, string> = {};
    let total = 0;
    for (let s = 1; s <= shards; s++) {
      const file = `model-${String(s).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
      // Tensors of a 27B model's size: the file is sparse, only the header is written.
      const tensors: [string, number][] = [[`model.layers.${s}.mlp.down_proj.weight`, 6_750_000_000], [`model.layers.${s}.input_layernorm.weight`, 10240]];
      const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
      let off = 0;
      for (const [t, n] of tensors) {
        header[t] = { dtype: "BF16", shape: [n / 2], data_offsets: [off, off + n] };
        off += n;
        weightMap[t] = file;
      }
      let h = Buffer.from(JSON.stringify(header));
      h = Buffer.concat([h, Buffer.alloc((8 - (h.length % 8)) % 8, " ")]);
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(h.length));
      writeFileSync(path.join(dir, file), Buffer.concat([len, h]));
      truncateSync(path.join(dir, file), 8 + h.length + off);
      total += off;
    }
    writeFileSync(path.join(dir, "model.safetensors.index.json"), JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }));
    writeFileSync(path.join(dir, "config.json"), JSON.stringify({ architectures: ["Qwen3ForCausalLM"], model_type: "qwen3", num_hidden_layers: o.layers ?? 64, num_attention_heads: 64, num_key_value_heads: 8, head_dim: 128, hidden_size: 5120, torch_dtype: "bfloat16" }));
    writeFileSync(path.join(dir, "tokenizer.json"), "{}");
    return dir;
  }

  /** The same model as a Hugging Face cache: models--org--name/{blobs,snapshots/<rev>} with relative links. */
  hfCache(): string {
    const src = this.model("src");
    const repo = path.join(this.dir, "hub", "models--Qwen--Qwen3.8-27B");
    const rev = "0123456789abcdef0123456789abcdef01234567";
    const snap = path.join(repo, "snapshots", rev);
    mkdirSync(path.join(repo, "blobs"), { recursive: true });
    mkdirSync(snap, { recursive: true });
    for (const f of execFileSync("ls", [src], { encoding: "utf8" }).trim().split("\n")) {
      const blob = `blob-${f}`;
      execFileSync("cp", ["--sparse=always", path.join(src, f), path.join(repo, "blobs", blob)]);
      symlinkSync(`../../blobs/${blob}`, path.join(snap, f));
    }
    return snap;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
