"""A Pulumi program in Python on reprobench's components.

It builds one BenchCluster (reprobench's root component, served to Python by the component package in
../../plugin): one model server on one host, the router and Harbor on another, and the cluster's own
three-task smoke run of Terminus-2 (``run.enabled``), followed to its end. The environment — where the
hosts are, which image and dataset, which registry and proxies — comes from this stack's config (see
README.md), as in ../own-program.
"""

import pulumi
import pulumi_reprobench as reprobench

config = pulumi.Config()
# The two hosts, as reprobench's hosts[] entries without roles: the worker, then the runner.
worker_host, runner_host = config.require_object("hosts")
# This environment's settings sections (modelServer image and model, registries, proxy, toolBundle, harbor dataset).
site = config.require_object("site")


def section(key: str) -> dict:
    return dict(site.get(key) or {})


# One worker, one DP rank; the router and Harbor on the runner; the cluster's own job on it.
settings = {
    **site,
    "hosts": [
        {**worker_host, "roles": ["worker"]},
        {**runner_host, "roles": ["router", "runner"]},
    ],
    "modelServer": {**section("modelServer"), "tp": 1, "dp": 1},
    "harbor": {**section("harbor"), "enabled": True},
    "run": {
        "enabled": True,
        "agent": "terminus-2",
        "modelName": config.require("modelName"),
        "nConcurrentTrials": 2,
        "nConcurrentAgents": 2,
        "waitForCompletion": True,
        "jobNamePrefix": "python-program",
    },
}

cluster = reprobench.BenchCluster(
    "bench",
    settings=settings,
    # Secrets never go in settings: each has an argument of its own, a secret Output here.
    proxy_upstream=config.require_secret("proxyUpstream"),
)

pulumi.export("modelApiBase", cluster.model_api_base)
pulumi.export("routerUrl", cluster.router_url)
pulumi.export("workerUrls", cluster.worker_urls)
pulumi.export("serverImages", cluster.server_images)
pulumi.export("jobName", cluster.job_name)
pulumi.export("jobState", cluster.job_state)
pulumi.export("jobSummary", cluster.job_summary)
