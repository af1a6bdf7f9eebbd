// Defaults reproduce seed 000 (/work/shared/seeds/000_745229a2bcd86dd8.txt, the final 6× run); line
// numbers below point into that file.
import { describe, expect, it } from "vitest";
import { apiBase, parseConfig, routerCommand, sglangCommand, workerSettings, type ReprobenchConfig } from "../../../components/config";
import { minimalRealConfig } from "./helpers";

function defaults(): ReprobenchConfig {
  const r = parseConfig(minimalRealConfig());
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

describe("defaults = seed 000", () => {
  const c = defaults();

  it("SGLang worker settings", () => {
    const s = workerSettings(c, "worker-a");
    expect(s.image).toBe("lmsysorg/sglang:latest-runtime"); // l.102 SGLANG_IMAGE
    expect(s.port).toBe(30001); // l.106 WORKER_PORT
    expect([s.tp, s.dp]).toEqual([4, 2]); // l.538–539 --tp-size 4 --dp-size 2
    expect(s.contextLength).toBe(262144); // l.540
    expect(s.maxRunningRequests).toBe(5); // l.541
    expect(s.maxMambaCacheSize).toBe(25); // l.542
    expect(s.memFractionStatic).toBe(0.9); // l.543
    expect([s.reasoningParser, s.toolCallParser]).toEqual(["qwen3", "qwen3_coder"]); // l.544–545
    expect(s.servedModelName).toBe("Qwen/Qwen3.8-27B"); // l.535
    expect(s.stopTimeoutSecs).toBe(30); // l.522 --stop-timeout 30
    expect(s.ulimits).toEqual({ memlock: -1, stack: 67108864 }); // l.526–527
    expect(s.env).toEqual({ HOME: "/tmp", HF_HOME: "/tmp/huggingface" });
    expect([s.gpus, s.ipc, s.user, s.launcher]).toEqual(["all", "host", "ssh-user", "sglang serve"]);
    expect(s.containerName).toBe("qwen38-worker-a"); // WORKER_NAME=qwen38-worker-a
    expect(s.readyTimeoutMinutes).toBeGreaterThanOrEqual(30);
  });

  it("the worker command line is the seed's, flag for flag", () => {
    // l.533–545, with $WORKER_IP = worker-a's private IP and $WORKER_PORT = 30001.
    expect(sglangCommand(workerSettings(c, "worker-a"))).toEqual([
      "sglang", "serve",
      "--model-path", "/models/Qwen3.8-27B",
      "--served-model-name", "Qwen/Qwen3.8-27B",
      "--host", "10.0.0.11",
      "--port", "30001",
      "--tp-size", "4",
      "--dp-size", "2",
      "--context-length", "262144",
      "--max-running-requests", "5",
      "--max-mamba-cache-size", "25",
      "--mem-fraction-static", "0.90",
      "--reasoning-parser", "qwen3",
      "--tool-call-parser", "qwen3_coder",
    ]);
  });

  it("router settings and command line", () => {
    const r = c.router;
    expect([r.host, r.port]).toEqual(["127.0.0.1", 30000]); // l.601–602, l.107 ROUTER_PORT
    expect([r.policy, r.dpAware, r.balanceAbsThreshold, r.balanceRelThreshold]).toEqual(["cache_aware", true, 1, 1.2]); // l.606–609
    expect(r.ulimits).toEqual({ nofile: { soft: 65536, hard: 65536 } }); // l.595
    expect(r.stopTimeoutSecs).toBe(180); // l.795 docker stop --time 180
    expect(r.image).toBe("lmsysorg/sglang:latest-runtime"); // the seed runs the router in $SGLANG_IMAGE
    expect(r.containerName).toBe("qwen38-global-router");
    // The seed's flags in its order (l.600–609); the last three restate sglang-router 0.3.2's defaults
    // (1800 s, 1800 s, 29000) so the port the router always binds is visible in the config.
    expect(routerCommand(c)).toEqual([
      "python3", "-m", "sglang_router.launch_router",
      "--host", "127.0.0.1",
      "--port", "30000",
      "--worker-urls", "http://10.0.0.11:30001", "http://10.0.0.12:30001",
      "--dp-aware",
      "--policy", "cache_aware",
      "--balance-abs-threshold", "1",
      "--balance-rel-threshold", "1.2",
      "--worker-startup-timeout-secs", "1800",
      "--request-timeout-secs", "1800",
      "--prometheus-port", "29000",
    ]);
    expect(apiBase(c)).toBe("http://127.0.0.1:30000/v1"); // l.648 api_base
  });

  it("docker, proxy and tool bundle", () => {
    expect(c.docker.addressPools).toEqual([{ base: "172.18.0.0/15", size: 24 }]); // l.451–452, l.475
    expect([c.docker.forceRestart, c.docker.restoreOnDestroy]).toEqual([false, true]);
    expect(c.proxy.bridgePort).toBe(27891); // l.415 PROXY_BRIDGE_PORT
    expect(c.proxy.noProxy).toEqual(["127.0.0.1", "localhost"]); // l.679
    expect(c.toolBundle.asciinemaVersion).toBe("2.4.0"); // l.334
    expect(c.toolBundle.asciinemaSha256).toBe("249ccf108509d643ddaf38979dac48c99e9e251f597173d8553a30d7a6423104"); // l.337
    expect(c.toolBundle.mountPath).toBe("/opt/harbor-tools"); // l.392
  });

  it("Harbor and the dataset", () => {
    const h = c.harbor;
    expect(h.version).toBe("0.21.0"); // l.27
    expect(h.wheelSha256).toBe("c77d779a03f1a9e8ecb3c449e17f39a9728b82238832f1fd28632eb9426c0a21"); // l.164
    expect(h.pythonVersion).toBe("3.13"); // l.159
    expect(h.datasetRepo).toBe("https://github.com/harbor-framework/terminal-bench-2-1.git"); // l.193
    expect(h.datasetCommit).toBe("7131e4375048a0e408a8fb404b5f499d726b695b"); // l.197
    expect(h.expectedTaskCount).toBe(89); // l.204
    expect(h.jobsDir.startsWith("/")).toBe(true);
  });

  it("the run: c25/a20, agent 6×, setup 5×, sampling and model_info", () => {
    const r = c.run;
    expect(r.nConcurrentTrials).toBe(25); // l.636 n_concurrent_trials
    expect(r.nConcurrentAgents).toBe(20); // l.646 agents[0].n_concurrent
    expect(r.agentTimeoutMultiplier).toBe(6); // l.637
    expect(r.agentSetupTimeoutMultiplier).toBe(5); // l.638
    expect([r.verifierTimeoutMultiplier, r.timeoutMultiplier]).toEqual([null, 1]); // not set in the seed: Harbor's defaults
    expect([r.agent, r.modelName]).toEqual(["terminus-2", "openai/Qwen/Qwen3.8-27B"]); // l.644–645
    expect(r.sampling).toEqual({ temperature: 1, topP: 0.95, topK: null, extraCallKwargs: {} }); // l.649, l.652; top_k 未设置 (l.79)
    expect(r.modelInfo).toEqual({ maxInputTokens: 262144, maxOutputTokens: 65536, inputCostPerToken: 0, outputCostPerToken: 0 }); // l.654–657
    expect(r.recordTerminalSession).toBe(true); // l.650
    expect([r.cpuEnforcementPolicy, r.memoryEnforcementPolicy]).toEqual(["auto", "auto"]); // l.641–642
    expect(r.jobNamePrefix).toBe("qwen38-terminus2-tb21-full89-c25-a20-agent6x"); // l.720
    expect(r.enabled).toBe(false); // opt-in: standing the cluster up never starts a 7-hour job by itself
  });
});
