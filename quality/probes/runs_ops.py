from harness import Run


def pods(status, ready, restarts, age, suffix="7d9f8c6b5"):
    return (
        "NAME                      READY   STATUS              RESTARTS   AGE\n"
        f"web-{suffix}-x2kqz    {ready}     {status:<18}  {restarts}          {age}\n"
        f"web-{suffix}-p8m4d    {ready}     {status:<18}  {restarts}          {age}"
    )


def ops_legit():
    r = Run("ops_rollout_progresses_legit", "polling-ops", "loop-free", None)
    r.turn("Deploying web v2.14.0 to prod and waiting for the rollout.")
    r.call(
        "k8s",
        {
            "args": [
                "-n",
                "prod",
                "set",
                "image",
                "deployment/web",
                "web=registry.acme.io/web:v2.14.0",
            ]
        },
        "deployment.apps/web image updated",
    )
    r.call(
        "k8s",
        {"args": ["-n", "prod", "rollout", "status", "deployment/web", "--timeout=5s"]},
        'Waiting for deployment "web" rollout to finish: 0 of 2 updated replicas are available...\nerror: timed out waiting for the condition',
        error=True,
    )
    seq = (
        [("Pending", "0/1", 0, "4s")] * 3
        + [("ContainerCreating", "0/1", 0, "31s")] * 5
        + [("Running", "0/1", 0, "1m12s")] * 2
        + [("Running", "1/1", 0, "1m40s")]
    )
    t = 4
    for i, (st, rd, rs, _) in enumerate(seq):
        r.call("sleep", {"seconds": 10}, "slept 10s")
        t += 12
        age = f"{t}s" if t < 60 else f"{t // 60}m{t % 60}s"
        r.call(
            "k8s", {"args": ["-n", "prod", "get", "pods", "-l", "app=web"]}, pods(st, rd, rs, age)
        )
        if i in (2, 7):
            r.call(
                "k8s",
                {"args": ["-n", "prod", "describe", "pod", "web-7d9f8c6b5-x2kqz"]},
                f'Events:\n  Type    Reason     Age   From               Message\n  Normal  Scheduled  {t}s   default-scheduler  Successfully assigned prod/web-7d9f8c6b5-x2kqz to node-7\n  Normal  Pulling    {t - 3}s   kubelet            Pulling image "registry.acme.io/web:v2.14.0"'
                + (
                    "\n  Normal  Pulled  2s  kubelet  Successfully pulled image in 41.2s"
                    if i == 7
                    else ""
                ),
            )
    r.call(
        "k8s",
        {"args": ["-n", "prod", "rollout", "status", "deployment/web"]},
        'deployment "web" successfully rolled out',
    )
    r.turn("Rollout done. Now the DB migration job.")
    r.call(
        "k8s",
        {"args": ["-n", "prod", "apply", "-f", "jobs/migrate-2023-11-14.yaml"]},
        "job.batch/migrate-20231114 created",
    )
    jid = "migrate-20231114"
    states = [
        ("PENDING", 0),
        ("RUNNING", 3),
        ("RUNNING", 3),
        ("RUNNING", 12),
        ("RUNNING", 27),
        ("RUNNING", 27),
        ("RUNNING", 48),
        ("RUNNING", 71),
        ("RUNNING", 96),
        ("SUCCEEDED", 100),
    ]
    for i, (st, pct) in enumerate(states):
        r.call(
            "get_job_status",
            {"job_id": jid},
            f'{{"job_id": "{jid}", "state": "{st}", "progress": "{pct}%", "updated_at": "2023-11-14T22:{14 + i * 2:02d}:{(7 * i) % 60:02d}Z", "worker_pid": {31000 + i}}}',
        )
        if st != "SUCCEEDED":
            r.call("sleep", {"seconds": 30}, "slept 30s")
    r.call(
        "k8s",
        {"args": ["-n", "prod", "logs", "job/migrate-20231114", "--tail=3"]},
        "applied 0142_add_invoice_index\napplied 0143_backfill_currency\nmigrations complete (2 applied) in 212.4s",
    )
    return r


def ops_loop():
    r = Run("ops_pod_stuck_pending_loop", "polling-ops", "loop", 4)
    r.call(
        "k8s",
        {"args": ["-n", "staging", "apply", "-f", "deploy/worker.yaml"]},
        "deployment.apps/worker configured",
    )
    r.call(
        "k8s",
        {"args": ["-n", "staging", "get", "pods", "-l", "app=worker"]},
        pods("Pending", "0/1", 0, "3s", "5c8d7f9b4"),
    )
    r.call(
        "k8s",
        {"args": ["-n", "staging", "describe", "pod", "worker-5c8d7f9b4-x2kqz"]},
        "Events:\n  Warning  FailedScheduling  5s  default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    )
    r.turn("The pod is pending; GPU nodes may be scaling up. I'll wait.")
    t = 5
    for i in range(15):
        r.call("sleep", {"seconds": 20}, "slept 20s")
        t += 22
        age = f"{t}s" if t < 60 else f"{t // 60}m{t % 60}s"
        r.call(
            "k8s",
            {"args": ["-n", "staging", "get", "pods", "-l", "app=worker"]},
            pods("Pending", "0/1", 0, age, "5c8d7f9b4"),
        )
        if i % 5 == 4:
            r.turn("Still pending. Waiting for the cluster autoscaler.")
    return r


def ops_loop_status_tool():
    """Same stuck state seen through a poll-kind status tool: 15 identical job statuses."""
    r = Run("ops_job_status_never_changes_loop", "polling-ops", "loop", 1)
    r.call(
        "k8s",
        {"args": ["-n", "etl", "create", "job", "backfill-1114", "--from=cronjob/backfill"]},
        "job.batch/backfill-1114 created",
    )
    for i in range(15):
        r.call(
            "get_job_status",
            {"job_id": "backfill-1114"},
            f'{{"job_id": "backfill-1114", "state": "QUEUED", "position": 3, "checked_at": "2023-11-14T23:{i * 2:02d}:{(13 * i) % 60:02d}Z"}}',
        )
        r.call("sleep", {"seconds": 60}, "slept 60s")
    return r


RUNS = [ops_legit, ops_loop, ops_loop_status_tool]
