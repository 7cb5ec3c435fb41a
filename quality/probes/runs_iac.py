"""Infrastructure-as-code agent, shape "terraform". Invented runs.

Tools: terraform(subcommand, args) with subcommand one of init/plan/apply/state/validate,
read_file(path), write_file(path, content), aws(command) (AWS CLI, JSON output).

Label convention: Run(name, shape, label, loop_start). label is "loop-free" or "loop";
loop_start = 0-based index (counting tool calls only, not model turns) of the first tool
call that repeats an attempt that had already come back futile (the first repetition, not
the first attempt); None for loop-free runs. A loop means the agent is stuck, repeating
attempts that produce nothing new, for at least 3 futile repetitions. Loop-free runs are
genuine, productive work even where they look repetitive on the surface."""
# ruff: noqa

import json
from datetime import datetime, timedelta

from harness import Run

SHAPE = "terraform"


# --------------------------------------------------------------------------- helpers


def _ts(base, secs):
    return (base + timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _footer(code, elapsed, when):
    return f"\n\n[terraform exited {code} after {elapsed:.1f}s at {when}]"


def tf(r, sub, args, out, code=0, dur=3.0, when="2025-06-03T09:00:00Z"):
    r.call(
        "terraform",
        {"subcommand": sub, "args": args},
        out + _footer(code, dur, when),
        error=code != 0,
        dur=dur,
    )


def aws(r, cmd, obj, error=False, dur=1.1):
    out = obj if isinstance(obj, str) else json.dumps(obj, indent=4)
    r.call("aws", {"command": cmd}, out, error=error, dur=dur)


def read(r, path, content, dur=0.05):
    r.call("read_file", {"path": path}, content, dur=dur)


def write(r, path, content, dur=0.05):
    n = len(content.encode())
    r.call(
        "write_file", {"path": path, "content": content}, f"Wrote {n:,} bytes to {path}", dur=dur
    )


INIT_OK = """Initializing the backend...

Successfully configured the backend "s3"! Terraform will automatically
use this backend unless the backend configuration changes.

Initializing modules...
{mods}
Initializing provider plugins...
- Reusing previous version of hashicorp/aws from the dependency lock file
- Reusing previous version of hashicorp/random from the dependency lock file
- Using previously-installed hashicorp/aws v5.54.1
- Using previously-installed hashicorp/random v3.6.2

Terraform has been successfully initialized!

You may now begin working with Terraform. Try running "terraform plan" to see
any changes that are required for your infrastructure. All Terraform commands
should now work.

If you ever set or change modules or backend configuration for Terraform,
rerun this command to reinitialize your working directory. If you forget, other
commands will detect it and remind you to do so if necessary."""


def init_ok(mods=()):
    lines = "\n".join(f"- {m} in modules/{m}" for m in mods)
    return INIT_OK.format(mods=lines + ("\n" if lines else ""))


PLAN_HEAD = """Acquiring state lock. This may take a few moments...
{refresh}
Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create
  ~ update in-place
  - destroy

Terraform will perform the following actions:
"""


def plan_text(refreshed, actions, add, change, destroy, saved=None, extra=""):
    refresh = "\n".join(f"{a}: Refreshing state... [id={i}]" for a, i in refreshed)
    body = PLAN_HEAD.format(refresh=refresh + "\n" if refresh else "")
    for addr, verb, attrs in actions:
        sym = {"created": "+", "updated in-place": "~", "destroyed": "-"}[verb]
        kind, name = addr.rsplit(".", 2)[-2:]
        body += f'\n  # {addr} will be {verb}\n  {sym} resource "{kind}" "{name}" {{\n'
        for a in attrs:
            body += f"      {a}\n"
        body += "    }\n"
    body += f"\nPlan: {add} to add, {change} to change, {destroy} to destroy.\n"
    body += extra
    if saved:
        body += (
            "\n─────────────────────────────────────────────────────────────────────────────\n\n"
            f"Saved the plan to: {saved}\n\nTo perform exactly these actions, run the following command to apply:\n"
            f'    terraform apply "{saved}"\n'
        )
    body += "Releasing state lock. This may take a few moments..."
    return body


def lock_error(lock_id, path, who, created, req, op="OperationTypeApply", version="1.8.4"):
    return f"""Acquiring state lock. This may take a few moments...
╷
│ Error: Error acquiring the state lock
│
│ Error message: operation error DynamoDB: PutItem, https response error
│ StatusCode: 400, RequestID: {req},
│ ConditionalCheckFailedException: The conditional request failed
│ Lock Info:
│   ID:        {lock_id}
│   Path:      {path}
│   Operation: {op}
│   Who:       {who}
│   Version:   {version}
│   Created:   {created}
│   Info:
│
│
│ Terraform acquires a state lock to protect the state from being written
│ by multiple users at the same time. Please resolve the issue above and try
│ again. For most commands, you can disable locking with the "-lock=false"
│ flag, but this is not recommended.
╵"""


_REQ_ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def ddb_req(seed):
    """Deterministic DynamoDB-style request id (52 chars) that differs per seed."""
    x = seed * 2654435761 + 97
    out = []
    for _ in range(52):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append(_REQ_ALPHA[(x >> 33) % 36])
    return "".join(out)


def apply_lines(items):
    out = []
    for addr, secs, rid in items:
        out.append(f"{addr}: Creating...")
        if secs >= 10:
            for k in range(10, secs, 10):
                out.append(f"{addr}: Still creating... [{k}s elapsed]")
        out.append(f"{addr}: Creation complete after {secs}s [id={rid}]")
    return "\n".join(out)


def apply_ok(items, added, outputs="", locked=True, release=False):
    """Output of an apply that created items: creation lines, the summary, then any outputs."""
    out = (
        "Acquiring state lock. This may take a few moments...\n" if locked else ""
    ) + apply_lines(items)
    out += f"\n\nApply complete! Resources: {added} added, 0 changed, 0 destroyed."
    if outputs:
        out += "\n\nOutputs:\n\n" + outputs
    if release:
        out += "\nReleasing state lock. This may take a few moments..."
    return out


# --------------------------------------------------------------------------- loop-free


ECS_TF_V1 = """resource "aws_ecs_service" "checkout" {
  name            = "checkout"
  cluster         = data.aws_ecs_cluster.core.arn
  task_definition = aws_ecs_task_definition.checkout.arn
  desired_count   = 3
  launch_type     = "FARGATE"

  network_configuration {
    subnet_id        = data.terraform_remote_state.network.outputs.private_subnet_ids
    security_groups  = [aws_security_group.checkout.id]
    assign_public_ip = false
  }

  load_balancer {
    target_group_arn = aws_lb_target_group.checkout.arn
    container_name   = "checkout"
    container_port   = 8080
  }
}

resource "aws_security_group" "checkout" {
  name_prefix = "checkout-"
  vpc_id      = var.vpc_id
  ...
}

resource "aws_appautoscaling_target" "checkout" {
  count              = length(aws_lb_target_group.checkout.arn) > 0 ? 1 : 0
  max_capacity       = 12
  min_capacity       = 3
  resource_id        = "service/prod-core/checkout"
  scalable_dimension = "ecs:service:DesiredCount"
  service_namespace  = "ecs"
}
"""


ECS_TF_FIXES = [
    ("subnet_id       ", "subnets         "),
    ("var.vpc_id", "data.terraform_remote_state.network.outputs.vpc_id"),
    ("length(aws_lb_target_group.checkout.arn) > 0 ? 1 : 0", "var.enable_autoscaling ? 1 : 0"),
    (
        "    container_port   = 8080\n  }\n}",
        "    container_port   = 8080\n  }\n\n  depends_on = [aws_lb_listener_rule.checkout]\n}",
    ),
]


def ecs_tf(n_fixes):
    """ecs.tf after the first n_fixes edits of ECS_TF_FIXES."""
    text = ECS_TF_V1
    for old, new in ECS_TF_FIXES[:n_fixes]:
        text = text.replace(old, new)
    return text


CHECKOUT_SERVICE_ACTIONS = [
    (
        "aws_ecs_service.checkout",
        "created",
        ['+ name          = "checkout"', "+ desired_count = 3"],
    ),
    (
        "aws_appautoscaling_target.checkout[0]",
        "created",
        ["+ max_capacity = 12", "+ min_capacity = 3"],
    ),
]


def iac_plan_fix_iterate():
    r = Run("iac_plan_fix_iterate", SHAPE, "loop-free", None)
    r.turn(
        "Task: bring up the new checkout ECS service defined in services/checkout. Let me look at the config first."
    )
    read(r, "services/checkout/ecs.tf", ECS_TF_V1)
    tf(
        r,
        "validate",
        "",
        """╷
│ Error: Unsupported argument
│
│   on ecs.tf line 9, in resource "aws_ecs_service" "checkout":
│    9:     subnet_id        = data.terraform_remote_state.network.outputs.private_subnet_ids
│
│ An argument named "subnet_id" is not expected here. Did you mean "subnets"?
╵""",
        code=1,
        dur=2.4,
        when="2025-06-03T09:02:11Z",
    )
    r.turn("network_configuration takes `subnets`, not `subnet_id`. Fixing.")
    write(r, "services/checkout/ecs.tf", ecs_tf(1))
    tf(
        r,
        "validate",
        "",
        """╷
│ Error: Reference to undeclared input variable
│
│   on ecs.tf line 23, in resource "aws_security_group" "checkout":
│   23:   vpc_id      = var.vpc_id
│
│ An input variable with the name "vpc_id" has not been declared. This
│ variable can be declared with a variable "vpc_id" {} block.
╵""",
        code=1,
        dur=2.2,
        when="2025-06-03T09:03:40Z",
    )
    read(
        r,
        "services/checkout/variables.tf",
        """variable "environment" {
  type    = string
  default = "prod"
}

variable "image_tag" {
  type        = string
  description = "checkout container tag, set by CI"
}

variable "enable_autoscaling" {
  type    = bool
  default = true
}
""",
    )
    r.turn(
        "Rather than a new variable I'll take vpc_id from the network remote state, same as the subnets. Editing ecs.tf again."
    )
    write(r, "services/checkout/ecs.tf", ecs_tf(2))
    tf(
        r,
        "validate",
        "",
        """╷
│ Warning: Argument is deprecated
│
│   with data.terraform_remote_state.network,
│   on data.tf line 4, in data "terraform_remote_state" "network":
│    4:     dynamodb_table = "acme-tf-locks"
│
│ The parameter "dynamodb_table" is deprecated. Use parameter "use_lockfile" instead.
╵
Success! The configuration is valid, but there were some validation warnings as shown above.""",
        dur=2.6,
        when="2025-06-03T09:05:02Z",
    )
    tf(
        r,
        "plan",
        "-var image_tag=2025.06.02-7f3c1ab -out=tfplan",
        """Acquiring state lock. This may take a few moments...
data.aws_ecs_cluster.core: Reading...
data.terraform_remote_state.network: Reading...
data.terraform_remote_state.network: Read complete after 1s
data.aws_ecs_cluster.core: Read complete after 0s [id=arn:aws:ecs:eu-west-1:418273645901:cluster/prod-core]
╷
│ Error: Invalid count argument
│
│   on ecs.tf line 28, in resource "aws_appautoscaling_target" "checkout":
│   28:   count              = length(aws_lb_target_group.checkout.arn) > 0 ? 1 : 0
│
│ The "count" value depends on resource attributes that cannot be determined
│ until apply, so Terraform cannot predict how many instances will be created.
│ To work around this, use the -target argument to first apply only the
│ resources that the count depends on.
╵
Releasing state lock. This may take a few moments...""",
        code=1,
        dur=6.8,
        when="2025-06-03T09:05:41Z",
    )
    r.turn("That count should key off the enable_autoscaling flag, which is known at plan time.")
    write(r, "services/checkout/ecs.tf", ecs_tf(3))
    tf(
        r,
        "plan",
        "-var image_tag=2025.06.02-7f3c1ab -out=tfplan",
        plan_text(
            [("data.aws_ecs_cluster.core", "arn:aws:ecs:eu-west-1:418273645901:cluster/prod-core")],
            [
                (
                    "aws_cloudwatch_log_group.checkout",
                    "created",
                    ['+ name              = "/ecs/prod/checkout"', "+ retention_in_days = 30"],
                ),
                (
                    "aws_ecs_task_definition.checkout",
                    "created",
                    ['+ family = "checkout"', '+ cpu    = "512"', '+ memory = "1024"'],
                ),
                (
                    "aws_security_group.checkout",
                    "created",
                    ['+ name_prefix = "checkout-"', '+ vpc_id      = "vpc-0c3f7a91d2e84b6a1"'],
                ),
                (
                    "aws_lb_target_group.checkout",
                    "created",
                    ["+ port        = 8080", '+ target_type = "ip"'],
                ),
                ("aws_lb_listener_rule.checkout", "created", ["+ priority = 140"]),
                *CHECKOUT_SERVICE_ACTIONS,
            ],
            7,
            0,
            0,
            saved="tfplan",
        ),
        dur=9.3,
        when="2025-06-03T09:07:15Z",
    )
    tf(
        r,
        "apply",
        "tfplan",
        apply_lines(
            [
                ("aws_cloudwatch_log_group.checkout", 1, "/ecs/prod/checkout"),
                ("aws_security_group.checkout", 3, "sg-04be1d2c9a7f3e512"),
                (
                    "aws_lb_target_group.checkout",
                    1,
                    "arn:aws:elasticloadbalancing:eu-west-1:418273645901:targetgroup/checkout/6d0ecf831eec9f09",
                ),
                ("aws_ecs_task_definition.checkout", 1, "checkout"),
            ]
        )
        + "\naws_ecs_service.checkout: Creating...\naws_lb_listener_rule.checkout: Creating...\n"
        """aws_lb_listener_rule.checkout: Creation complete after 1s [id=arn:aws:elasticloadbalancing:eu-west-1:418273645901:listener-rule/app/prod-public/8e4497da625e2d8a/9ab28ade35828f96/2f3a1c0d5b6e7f81]
╷
│ Error: creating ECS Service (checkout): operation error ECS: CreateService, https response error StatusCode: 400, RequestID: 3b9d2e41-8c0a-4f6e-b1d7-52a9c0e4f813, InvalidParameterException: The target group with targetGroupArn arn:aws:elasticloadbalancing:eu-west-1:418273645901:targetgroup/checkout/6d0ecf831eec9f09 does not have an associated load balancer.
│
│   with aws_ecs_service.checkout,
│   on ecs.tf line 1, in resource "aws_ecs_service" "checkout":
│    1: resource "aws_ecs_service" "checkout" {
│
╵
Releasing state lock. This may take a few moments...""",
        code=1,
        dur=21.7,
        when="2025-06-03T09:08:02Z",
    )
    r.turn(
        "Race: the service was created in parallel with the listener rule, so the target group wasn't attached to the ALB yet. The listener rule now exists; I'll add an explicit depends_on so ordering holds on fresh environments too."
    )
    read(
        r,
        "services/checkout/alb.tf",
        """resource "aws_lb_target_group" "checkout" {
  name        = "checkout"
  port        = 8080
  protocol    = "HTTP"
  target_type = "ip"
  vpc_id      = data.terraform_remote_state.network.outputs.vpc_id
  health_check {
    path    = "/healthz"
    matcher = "200"
  }
}

resource "aws_lb_listener_rule" "checkout" {
  listener_arn = data.terraform_remote_state.network.outputs.public_https_listener_arn
  priority     = 140
  action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.checkout.arn
  }
  condition {
    path_pattern { values = ["/checkout/*"] }
  }
}
""",
    )
    write(r, "services/checkout/ecs.tf", ecs_tf(4))
    tf(
        r,
        "plan",
        "-var image_tag=2025.06.02-7f3c1ab -out=tfplan",
        plan_text(
            [
                ("aws_cloudwatch_log_group.checkout", "/ecs/prod/checkout"),
                ("aws_security_group.checkout", "sg-04be1d2c9a7f3e512"),
                (
                    "aws_lb_target_group.checkout",
                    "arn:aws:elasticloadbalancing:eu-west-1:418273645901:targetgroup/checkout/6d0ecf831eec9f09",
                ),
                ("aws_ecs_task_definition.checkout", "checkout"),
            ],
            [
                *CHECKOUT_SERVICE_ACTIONS,
            ],
            2,
            0,
            0,
            saved="tfplan",
        ),
        dur=8.1,
        when="2025-06-03T09:11:29Z",
    )
    tf(
        r,
        "apply",
        "tfplan",
        apply_ok(
            [
                (
                    "aws_ecs_service.checkout",
                    34,
                    "arn:aws:ecs:eu-west-1:418273645901:service/prod-core/checkout",
                ),
                ("aws_appautoscaling_target.checkout[0]", 1, "service/prod-core/checkout"),
            ],
            2,
            locked=False,
            release=True,
        ),
        dur=41.2,
        when="2025-06-03T09:12:30Z",
    )
    aws(
        r,
        "aws ecs describe-services --cluster prod-core --services checkout --query 'services[0].{status:status,running:runningCount,desired:desiredCount,deployments:deployments[].{status:status,rollout:rolloutState}}'",
        {
            "status": "ACTIVE",
            "running": 3,
            "desired": 3,
            "deployments": [{"status": "PRIMARY", "rollout": "COMPLETED"}],
        },
        dur=0.9,
    )
    r.turn(
        "checkout service is up: 3/3 tasks running, rollout COMPLETED. Fixed four distinct problems along the way (wrong argument name, undeclared var, unknown count, create ordering)."
    )
    return r


def iac_lock_wait_ci():
    r = Run("iac_lock_wait_ci", SHAPE, "loop-free", None)
    path = "acme-tfstate/prod/edge/terraform.tfstate"
    lock = "6b0e2c4f-93d1-7a58-2e0b-c41f85d7a3e9"
    who = "runner@gha-prod-runner-7 (actions run 9283112047, acme/edge-infra main)"
    created = "2025-06-03 14:20:58.112904 +0000 UTC"
    get_lock = (
        'aws dynamodb get-item --table-name acme-tf-locks --key \'{"LockID":{"S":"' + path + "\"}}'"
    )
    r.turn("Attaching the new WAF ACL to the public ALB in prod/edge.")
    tf(
        r,
        "init",
        "-backend-config=backend/prod-edge.hcl",
        init_ok(["alb", "waf"]),
        dur=4.6,
        when="2025-06-03T14:19:52Z",
    )
    tf(
        r,
        "plan",
        "-out=tfplan",
        plan_text(
            [
                (
                    "module.alb.aws_lb.public",
                    "arn:aws:elasticloadbalancing:eu-west-1:418273645901:loadbalancer/app/prod-public/8e4497da625e2d8a",
                ),
                ("module.waf.aws_wafv2_web_acl.edge", "b81c1f0e-52d4-4e3a-9b8d-2f7a0c6e1d94"),
            ],
            [
                (
                    "module.waf.aws_wafv2_web_acl_association.public_alb",
                    "created",
                    [
                        '+ resource_arn = "arn:aws:elasticloadbalancing:eu-west-1:418273645901:loadbalancer/app/prod-public/8e4497da625e2d8a"'
                    ],
                ),
                (
                    "module.alb.aws_lb_listener.https",
                    "updated in-place",
                    [
                        '~ ssl_policy = "ELBSecurityPolicy-2016-08" -> "ELBSecurityPolicy-TLS13-1-2-2021-06"'
                    ],
                ),
                (
                    "module.alb.aws_security_group.public",
                    "updated in-place",
                    ["~ ingress = [ ... ]"],
                ),
            ],
            1,
            2,
            0,
            saved="tfplan",
        ),
        dur=11.4,
        when="2025-06-03T14:20:31Z",
    )
    tf(
        r,
        "apply",
        "tfplan",
        lock_error(lock, path, who, created, ddb_req(11)),
        code=1,
        dur=2.1,
        when="2025-06-03T14:21:06Z",
    )
    r.turn(
        "Locked by a GitHub Actions runner, created 8 seconds ago: CI is applying a merge to main. That's a live job, not a stale lock; I'll check the lock item and then wait with a lock timeout."
    )
    aws(
        r,
        get_lock,
        {
            "Item": {
                "LockID": {"S": path},
                "Info": {
                    "S": json.dumps(
                        {
                            "ID": lock,
                            "Operation": "OperationTypeApply",
                            "Info": "",
                            "Who": who,
                            "Version": "1.8.4",
                            "Created": "2025-06-03T14:20:58.112904Z",
                            "Path": path,
                        }
                    )
                },
            }
        },
        dur=0.7,
    )
    tf(
        r,
        "apply",
        "-lock-timeout=3m tfplan",
        lock_error(lock, path, who, created, ddb_req(12)),
        code=1,
        dur=180.4,
        when="2025-06-03T14:24:19Z",
    )
    r.turn(
        "Still held after 3 minutes; CI applies for this stack usually take ~4-5 min. Checking whether the lock is gone yet before trying again."
    )
    aws(
        r,
        get_lock,
        "{}",
        dur=0.6,
    )
    r.turn("Lock released. CI changed the state while I waited, so my saved plan may be stale.")
    tf(
        r,
        "apply",
        "tfplan",
        """Acquiring state lock. This may take a few moments...
╷
│ Error: Saved plan is stale
│
│ The given plan file can no longer be applied because the state was changed
│ by another operation after the plan was created.
╵
Releasing state lock. This may take a few moments...""",
        code=1,
        dur=3.0,
        when="2025-06-03T14:25:47Z",
    )
    tf(
        r,
        "plan",
        "-out=tfplan",
        plan_text(
            [
                (
                    "module.alb.aws_lb.public",
                    "arn:aws:elasticloadbalancing:eu-west-1:418273645901:loadbalancer/app/prod-public/8e4497da625e2d8a",
                ),
                (
                    "module.alb.aws_lb_listener.https",
                    "arn:aws:elasticloadbalancing:eu-west-1:418273645901:listener/app/prod-public/8e4497da625e2d8a/9ab28ade35828f96",
                ),
                ("module.waf.aws_wafv2_web_acl.edge", "b81c1f0e-52d4-4e3a-9b8d-2f7a0c6e1d94"),
            ],
            [
                (
                    "module.waf.aws_wafv2_web_acl_association.public_alb",
                    "created",
                    [
                        '+ resource_arn = "arn:aws:elasticloadbalancing:eu-west-1:418273645901:loadbalancer/app/prod-public/8e4497da625e2d8a"'
                    ],
                ),
            ],
            1,
            0,
            0,
            saved="tfplan",
        ),
        dur=10.2,
        when="2025-06-03T14:26:20Z",
    )
    r.turn(
        "CI already rolled out the listener/SG changes from main; only my association remains. Applying."
    )
    tf(
        r,
        "apply",
        "tfplan",
        apply_ok(
            [
                (
                    "module.waf.aws_wafv2_web_acl_association.public_alb",
                    12,
                    "arn:aws:wafv2:eu-west-1:418273645901:regional/webacl/edge/b81c1f0e-52d4-4e3a-9b8d-2f7a0c6e1d94,arn:aws:elasticloadbalancing:eu-west-1:418273645901:loadbalancer/app/prod-public/8e4497da625e2d8a",
                )
            ],
            1,
            release=True,
        ),
        dur=17.9,
        when="2025-06-03T14:26:58Z",
    )
    tf(
        r,
        "state",
        "list module.waf",
        "module.waf.aws_wafv2_ip_set.blocklist\nmodule.waf.aws_wafv2_web_acl.edge\nmodule.waf.aws_wafv2_web_acl_association.public_alb\nmodule.waf.aws_wafv2_web_acl_logging_configuration.edge",
        dur=1.8,
        when="2025-06-03T14:27:20Z",
    )
    aws(
        r,
        "aws wafv2 get-web-acl-for-resource --resource-arn arn:aws:elasticloadbalancing:eu-west-1:418273645901:loadbalancer/app/prod-public/8e4497da625e2d8a --query 'WebACL.{Name:Name,Id:Id,Rules:length(Rules)}'",
        {"Name": "edge", "Id": "b81c1f0e-52d4-4e3a-9b8d-2f7a0c6e1d94", "Rules": 7},
        dur=0.8,
    )
    r.turn(
        "WAF ACL 'edge' (7 rules) is now attached to prod-public. Waited out one CI-held lock, re-planned after the state moved, applied."
    )
    return r


def staging_apply(r, module, out, dur, when, code=0):
    """A targeted, auto-approved `terraform apply` of one module of staging-eu."""
    tf(
        r,
        "apply",
        f"-auto-approve -var-file=envs/staging-eu/terraform.tfvars -target=module.{module}",
        out,
        code=code,
        dur=dur,
        when=when,
    )


NODE_GROUPS_TF = """resource "aws_eks_node_group" "general" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "general"
  node_role_arn   = var.node_role_arn
  subnet_ids      = var.private_subnet_ids
  ami_type        = "AL2_x86_64"
  instance_types  = ["m6i.large"]
  scaling_config {
    desired_size = 3
    min_size     = 2
    max_size     = 6
  }
}
"""


def iac_targeted_rollout():
    r = Run("iac_targeted_rollout", SHAPE, "loop-free", None)
    mods = ["network", "kms", "iam", "rds", "elasticache", "eks", "alb", "route53"]
    r.turn(
        "Standing up staging-eu from scratch. Plan everything first, then roll out module by module so failures are contained."
    )
    tf(
        r,
        "init",
        "-backend-config=envs/staging-eu/backend.hcl",
        init_ok(mods),
        dur=7.9,
        when="2025-06-04T08:01:13Z",
    )
    tf(
        r,
        "validate",
        "",
        "Success! The configuration is valid.",
        dur=3.1,
        when="2025-06-04T08:01:30Z",
    )
    tf(
        r,
        "plan",
        "-var-file=envs/staging-eu/terraform.tfvars",
        "Acquiring state lock. This may take a few moments...\n\n"
        "Terraform used the selected providers to generate the following execution\nplan. Resource actions are indicated with the following symbols:\n  + create\n\n"
        "Terraform will perform the following actions:\n\n  # module.network.aws_vpc.this will be created\n  ...\n  (63 more resources)\n\n"
        "Plan: 64 to add, 0 to change, 0 to destroy.\n\nChanges to Outputs:\n  + cluster_endpoint = (known after apply)\n  + db_endpoint      = (known after apply)\n  + vpc_id           = (known after apply)\n"
        "Releasing state lock. This may take a few moments...",
        dur=24.6,
        when="2025-06-04T08:02:09Z",
    )
    steps = [
        (
            "network",
            21,
            58.2,
            [
                ("module.network.aws_vpc.this", 2, "vpc-0a7d19c3e5b2f4801"),
                ("module.network.aws_nat_gateway.this[0]", 95, "nat-0f31c6a2b8d94e715"),
                ("module.network.aws_nat_gateway.this[1]", 104, "nat-02be7a49c1d0f6e33"),
            ],
            'vpc_id = "vpc-0a7d19c3e5b2f4801"',
        ),
        (
            "kms",
            3,
            6.4,
            [
                ("module.kms.aws_kms_key.data", 3, "5c2e8f1a-7b3d-4c9e-a0f6-1d8b2e7c4a93"),
                ("module.kms.aws_kms_alias.data", 0, "alias/staging-eu-data"),
            ],
            "",
        ),
        (
            "iam",
            9,
            14.8,
            [
                ("module.iam.aws_iam_role.eks_cluster", 1, "staging-eu-eks-cluster"),
                ("module.iam.aws_iam_role.eks_nodes", 1, "staging-eu-eks-nodes"),
                (
                    "module.iam.aws_iam_openid_connect_provider.ci",
                    1,
                    "arn:aws:iam::730915264480:oidc-provider/token.actions.githubusercontent.com",
                ),
            ],
            "",
        ),
        (
            "rds",
            6,
            611.7,
            [
                ("module.rds.aws_db_subnet_group.this", 1, "staging-eu-db"),
                ("module.rds.aws_db_instance.main", 583, "db-XK4QZ7P2R5NVUH3BTWJ6OAL2EM"),
            ],
            'db_endpoint = "staging-eu-main.c9xk2m4qp7ds.eu-central-1.rds.amazonaws.com:5432"',
        ),
        (
            "elasticache",
            4,
            402.3,
            [
                ("module.elasticache.aws_elasticache_subnet_group.this", 1, "staging-eu-cache"),
                (
                    "module.elasticache.aws_elasticache_replication_group.this",
                    378,
                    "staging-eu-sessions",
                ),
            ],
            "",
        ),
    ]
    for i, (m, n, dur, items, outp) in enumerate(steps):
        if i == 3:
            r.turn("network, kms, iam done. RDS next; this one takes ~10 minutes.")
        out = apply_ok(items, n, outputs=outp)
        out += "\n╷\n│ Warning: Applied changes may be incomplete\n│\n│ The plan was created with the -target option in effect, so some changes\n│ requested in the configuration may have been ignored and the output values\n│ may not be fully updated.\n╵"
        staging_apply(
            r,
            m,
            out,
            dur=dur,
            when=_ts(datetime(2025, 6, 4, 8, 3, 0), 60 + 90 * i + sum(s[2] for s in steps[:i])),
        )
    staging_apply(
        r,
        "eks",
        "Acquiring state lock. This may take a few moments...\n"
        + apply_lines(
            [
                ("module.eks.aws_eks_cluster.this", 487, "staging-eu"),
                ("module.eks.aws_eks_addon.vpc_cni", 36, "staging-eu:vpc-cni"),
            ]
        )
        + """
module.eks.aws_eks_node_group.general: Creating...
╷
│ Error: creating EKS Node Group (staging-eu:general): operation error EKS: CreateNodegroup, https response error StatusCode: 400, RequestID: 0d7f6b3a-e21c-4a88-9f5d-6b1c3e7a2d40, InvalidParameterException: AMI type AL2_x86_64 is not supported for Kubernetes version 1.33. Use AL2023_x86_64_STANDARD or BOTTLEROCKET_x86_64.
│
│   with module.eks.aws_eks_node_group.general,
│   on modules/eks/node_groups.tf line 1, in resource "aws_eks_node_group" "general":
│    1: resource "aws_eks_node_group" "general" {
│
╵
Releasing state lock. This may take a few moments...""",
        code=1,
        dur=561.3,
        when="2025-06-04T08:34:51Z",
    )
    r.turn(
        "Cluster and 8 other EKS resources created; node group failed because AL2 isn't available on 1.33. Switching ami_type."
    )
    read(
        r,
        "modules/eks/node_groups.tf",
        NODE_GROUPS_TF,
    )
    write(
        r,
        "modules/eks/node_groups.tf",
        NODE_GROUPS_TF.replace('"AL2_x86_64"', '"AL2023_x86_64_STANDARD"'),
    )
    staging_apply(
        r,
        "eks",
        apply_ok(
            [
                ("module.eks.aws_eks_node_group.general", 142, "staging-eu:general"),
                ("module.eks.aws_eks_addon.coredns", 24, "staging-eu:coredns"),
                ("module.eks.aws_eks_addon.ebs_csi", 51, "staging-eu:aws-ebs-csi-driver"),
            ],
            3,
            outputs='cluster_endpoint = "https://5F2A9C1E7B3D48E0A6C4B2D9F1E7A3C5.gr7.eu-central-1.eks.amazonaws.com"',
        ),
        dur=231.0,
        when="2025-06-04T08:41:33Z",
    )
    staging_apply(
        r,
        "alb",
        apply_ok(
            [
                (
                    "module.alb.aws_lb.public",
                    182,
                    "arn:aws:elasticloadbalancing:eu-central-1:730915264480:loadbalancer/app/staging-eu-public/1f4c8b2e9d3a7f60",
                ),
                (
                    "module.alb.aws_lb_listener.https",
                    1,
                    "arn:aws:elasticloadbalancing:eu-central-1:730915264480:listener/app/staging-eu-public/1f4c8b2e9d3a7f60/c2a9e4d71b8f3056",
                ),
            ],
            5,
        ),
        dur=196.5,
        when="2025-06-04T08:46:02Z",
    )
    staging_apply(
        r,
        "route53",
        apply_ok(
            [
                ("module.route53.aws_route53_zone.staging", 47, "Z07412983KQ2J5V8XHN1D"),
                (
                    "module.route53.aws_acm_certificate_validation.wildcard",
                    71,
                    "2025-06-04 08:49:58.44 +0000 UTC",
                ),
            ],
            4,
        ),
        dur=128.8,
        when="2025-06-04T08:50:07Z",
    )
    tf(
        r,
        "plan",
        "-var-file=envs/staging-eu/terraform.tfvars",
        "Acquiring state lock. This may take a few moments...\n(64 resources refreshed)\n\nNo changes. Your infrastructure matches the configuration.\n\nTerraform has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\nReleasing state lock. This may take a few moments...",
        dur=38.2,
        when="2025-06-04T08:51:12Z",
    )
    aws(
        r,
        "aws eks describe-cluster --name staging-eu --region eu-central-1 --query 'cluster.{status:status,version:version,platform:platformVersion}'",
        {"status": "ACTIVE", "version": "1.33", "platform": "eks.7"},
        dur=1.3,
    )
    r.turn("staging-eu is fully up: 64/64 resources, full plan shows no drift, EKS ACTIVE on 1.33.")
    return r


def iac_codebase_survey():
    r = Run("iac_codebase_survey", SHAPE, "loop-free", None)
    r.turn(
        "Task: document how to add a new environment to this repo. I need to understand the layout first, so I'll read the root config and the modules."
    )
    files = [
        (
            "backend.tf",
            'terraform {\n  backend "s3" {}\n}\n# bucket/key/region come from envs/<env>.backend.hcl\n',
        ),
        (
            "versions.tf",
            'terraform {\n  required_version = ">= 1.6, < 2.0"\n  required_providers {\n    aws    = { source = "hashicorp/aws", version = "~> 5.40" }\n    random = { source = "hashicorp/random", version = "~> 3.6" }\n  }\n}\n',
        ),
        (
            "main.tf",
            'provider "aws" {\n  region = var.region\n  default_tags { tags = { env = var.env, owner = "platform", repo = "acme/infra-live" } }\n}\n\nmodule "network" {\n  source     = "./modules/network"\n  env        = var.env\n  cidr_block = var.vpc_cidr\n  azs        = var.azs\n}\n\nmodule "app" {\n  source          = "./modules/app"\n  env             = var.env\n  vpc_id          = module.network.vpc_id\n  private_subnets = module.network.private_subnet_ids\n  instance_count  = var.app_instance_count\n}\n',
        ),
        (
            "variables.tf",
            'variable "env" { type = string }\nvariable "region" { type = string }\nvariable "vpc_cidr" { type = string }\nvariable "azs" { type = list(string) }\nvariable "app_instance_count" {\n  type    = number\n  default = 2\n}\n',
        ),
        (
            "envs/prod.tfvars",
            'env                = "prod"\nregion             = "eu-west-1"\nvpc_cidr           = "10.20.0.0/16"\nazs                = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]\napp_instance_count = 6\n',
        ),
        (
            "envs/staging.tfvars",
            'env                = "staging"\nregion             = "eu-west-1"\nvpc_cidr           = "10.40.0.0/16"\nazs                = ["eu-west-1a", "eu-west-1b"]\n',
        ),
        (
            "envs/staging.backend.hcl",
            'bucket         = "acme-tfstate-staging"\nkey            = "infra-live/terraform.tfstate"\nregion         = "eu-west-1"\ndynamodb_table = "acme-tf-locks"\nencrypt        = true\n',
        ),
        (
            "modules/network/main.tf",
            'resource "aws_vpc" "this" {\n  cidr_block           = var.cidr_block\n  enable_dns_hostnames = true\n  tags                 = { Name = "${var.env}-vpc" }\n}\n\nresource "aws_subnet" "private" {\n  count             = length(var.azs)\n  vpc_id            = aws_vpc.this.id\n  availability_zone = var.azs[count.index]\n  cidr_block        = cidrsubnet(var.cidr_block, 4, count.index)\n}\n\nresource "aws_subnet" "public" {\n  count             = length(var.azs)\n  vpc_id            = aws_vpc.this.id\n  availability_zone = var.azs[count.index]\n  cidr_block        = cidrsubnet(var.cidr_block, 4, count.index + 8)\n}\n',
        ),
        (
            "modules/network/outputs.tf",
            'output "vpc_id" { value = aws_vpc.this.id }\noutput "private_subnet_ids" { value = aws_subnet.private[*].id }\noutput "public_subnet_ids" { value = aws_subnet.public[*].id }\n',
        ),
        (
            "modules/app/main.tf",
            'data "aws_ami" "al2023" {\n  most_recent = true\n  owners      = ["amazon"]\n  filter {\n    name   = "name"\n    values = ["al2023-ami-2023.*-x86_64"]\n  }\n}\n\nresource "aws_launch_template" "app" {\n  name_prefix   = "${var.env}-app-"\n  image_id      = data.aws_ami.al2023.id\n  instance_type = "t3.medium"\n  iam_instance_profile { name = aws_iam_instance_profile.app.name }\n}\n\nresource "aws_autoscaling_group" "app" {\n  desired_capacity    = var.instance_count\n  min_size            = var.instance_count\n  max_size            = var.instance_count * 2\n  vpc_zone_identifier = var.private_subnets\n  launch_template {\n    id      = aws_launch_template.app.id\n    version = "$Latest"\n  }\n}\n',
        ),
        (
            "modules/app/iam.tf",
            'resource "aws_iam_role" "app" {\n  name_prefix        = "${var.env}-app-"\n  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json\n}\n\nresource "aws_iam_role_policy_attachment" "ssm" {\n  role       = aws_iam_role.app.name\n  policy_arn = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"\n}\n\nresource "aws_iam_instance_profile" "app" {\n  name_prefix = "${var.env}-app-"\n  role        = aws_iam_role.app.name\n}\n',
        ),
    ]
    for i, (p, c) in enumerate(files):
        if i == 4:
            r.turn(
                "Root module wires network -> app; per-env values live in envs/*.tfvars with a matching backend file. Checking the env files."
            )
        if i == 7:
            r.turn(
                "Subnets are carved with cidrsubnet(/16, 4, i) and public ones offset by 8, so an env can have at most 8 AZs. Now the modules themselves."
            )
        read(r, p, c)
    aws(
        r,
        "aws sts get-caller-identity",
        {
            "UserId": "AROAZ7Q4EXAMPLE2LKD9:alice.m",
            "Account": "418273645901",
            "Arn": "arn:aws:sts::418273645901:assumed-role/PlatformReadOnly/alice.m",
        },
        dur=0.8,
    )
    tf(
        r,
        "init",
        "-backend-config=envs/staging.backend.hcl -reconfigure",
        init_ok(["network", "app"]),
        dur=5.3,
        when="2025-06-05T10:14:09Z",
    )
    tf(
        r,
        "state",
        "list",
        "data.aws_iam_policy_document.ec2_assume\nmodule.app.data.aws_ami.al2023\nmodule.app.aws_autoscaling_group.app\nmodule.app.aws_iam_instance_profile.app\nmodule.app.aws_iam_role.app\nmodule.app.aws_iam_role_policy_attachment.ssm\nmodule.app.aws_launch_template.app\nmodule.network.aws_subnet.private[0]\nmodule.network.aws_subnet.private[1]\nmodule.network.aws_subnet.public[0]\nmodule.network.aws_subnet.public[1]\nmodule.network.aws_vpc.this",
        dur=2.2,
        when="2025-06-05T10:14:18Z",
    )
    tf(
        r,
        "plan",
        "-var-file=envs/staging.tfvars -lock=false",
        "module.network.aws_vpc.this: Refreshing state... [id=vpc-05d2e8a1f7c3b9460]\nmodule.app.data.aws_ami.al2023: Read complete after 1s [id=ami-0e9c4b7d12a6f3805]\n...\n\nNo changes. Your infrastructure matches the configuration.",
        dur=14.7,
        when="2025-06-05T10:14:41Z",
    )
    write(
        r,
        "docs/adding-an-environment.md",
        "# Adding an environment\n\n1. Copy `envs/staging.tfvars` to `envs/<env>.tfvars`; pick a non-overlapping /16 for `vpc_cidr` (prod 10.20, staging 10.40).\n2. Create `envs/<env>.backend.hcl` pointing at `acme-tfstate-<env>`; the lock table `acme-tf-locks` is shared.\n3. `terraform init -backend-config=envs/<env>.backend.hcl -reconfigure`\n4. `terraform plan -var-file=envs/<env>.tfvars` - expect 7 + 2*len(azs) resources.\n\nConstraints: at most 8 AZs (subnet math in modules/network), ASG max = 2x `app_instance_count`.\n",
    )
    r.turn(
        "Wrote docs/adding-an-environment.md based on the layout; staging plan confirms the described state is current (no drift)."
    )
    return r


# --------------------------------------------------------------------------- loops


def iac_stale_lock_apply_loop():
    # calls: 0 init, 1 plan, 2 apply(lock), 3.. apply again on the same lock -> loop_start=3
    r = Run("iac_stale_lock_apply_loop", SHAPE, "loop", 3)
    path = "acme-tfstate/prod/network/terraform.tfstate"
    lock = "9f1c3a7e-5d20-b84c-61e9-0a7f2d3c8b51"
    who = "jenkins@build-07.ci.internal"
    created = "2025-06-02 23:47:12.804531 +0000 UTC"
    r.turn("Adding two VPC endpoints (ssm, ssmmessages) to prod/network.")
    tf(
        r,
        "init",
        "-backend-config=backend/prod-network.hcl",
        init_ok(["vpc"]),
        dur=4.1,
        when="2025-06-03T13:58:40Z",
    )
    tf(
        r,
        "plan",
        "-out=tfplan -lock=false",
        plan_text(
            [("module.vpc.aws_vpc.this[0]", "vpc-0c3f7a91d2e84b6a1")],
            [
                (
                    "aws_vpc_endpoint.ssm",
                    "created",
                    [
                        '+ service_name      = "com.amazonaws.eu-west-1.ssm"',
                        '+ vpc_endpoint_type = "Interface"',
                    ],
                ),
                (
                    "aws_vpc_endpoint.ssmmessages",
                    "created",
                    [
                        '+ service_name      = "com.amazonaws.eu-west-1.ssmmessages"',
                        '+ vpc_endpoint_type = "Interface"',
                    ],
                ),
                (
                    "aws_security_group.endpoints",
                    "updated in-place",
                    ["~ ingress = [ + { from_port = 443, to_port = 443 } ]"],
                ),
            ],
            2,
            1,
            0,
            saved="tfplan",
        )
        .replace("Acquiring state lock. This may take a few moments...\n", "")
        .replace("Releasing state lock. This may take a few moments...", ""),
        dur=9.8,
        when="2025-06-03T13:59:22Z",
    )
    t0 = datetime(2025, 6, 3, 13, 59, 51)

    def err(k):
        return lock_error(lock, path, who, created, ddb_req(100 + k))

    tf(r, "apply", "tfplan", err(0), code=1, dur=2.3, when=_ts(t0, 0))
    r.turn("State is locked by a Jenkins job. It's probably finishing up; I'll retry.")
    tf(r, "apply", "tfplan", err(1), code=1, dur=2.1, when=_ts(t0, 41))
    tf(r, "apply", "tfplan", err(2), code=1, dur=2.4, when=_ts(t0, 97))
    r.turn(
        "Still locked. I'll give it a lock timeout so terraform waits for the other run to finish."
    )
    tf(r, "apply", "-lock-timeout=120s tfplan", err(3), code=1, dur=120.6, when=_ts(t0, 233))
    tf(r, "apply", "tfplan", err(4), code=1, dur=2.2, when=_ts(t0, 262))
    r.turn("The other job must be long. Trying a longer timeout.")
    tf(r, "apply", "-lock-timeout=300s tfplan", err(5), code=1, dur=300.9, when=_ts(t0, 581))
    tf(r, "apply", "tfplan", err(6), code=1, dur=2.0, when=_ts(t0, 617))
    r.turn("Retrying the apply once more.")
    tf(r, "apply", "tfplan", err(7), code=1, dur=2.3, when=_ts(t0, 688))
    tf(r, "apply", "-lock-timeout=60s tfplan", err(8), code=1, dur=60.4, when=_ts(t0, 771))
    tf(r, "apply", "tfplan", err(9), code=1, dur=2.1, when=_ts(t0, 802))
    return r


BASTION = """data "aws_ssm_parameter" "al2023" {{
  name = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
}}

resource "aws_security_group" "bastion" {{
  name_prefix = "bastion-"
  vpc_id      = data.terraform_remote_state.network.outputs.vpc_id
  egress {{
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }}
}}

resource "aws_instance" "bastion" {{
  ami                    = {ami}
  instance_type          = "{itype}"
  subnet_id              = data.terraform_remote_state.network.outputs.{subnet}
  vpc_security_group_ids = [aws_security_group.bastion.id]
  iam_instance_profile   = "bastion-ssm"
{extra}  tags = {{ Name = "bastion", role = "ssm-jump" }}
}}
"""


def _bastion_err(req):
    return (
        "Acquiring state lock. This may take a few moments...\n"
        "data.aws_ssm_parameter.al2023: Reading...\n"
        "data.aws_ssm_parameter.al2023: Read complete after 0s [id=/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64]\n"
        "aws_security_group.bastion: Refreshing state... [id=sg-0d81f4a62c9b3e057]\n"
        "aws_instance.bastion: Creating...\n"
        "╷\n"
        f"│ Error: creating EC2 Instance: operation error EC2: RunInstances, https response error StatusCode: 400, RequestID: {req}, api error InvalidParameterValue: Value (bastion-ssm) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name\n"
        "│\n"
        "│   with aws_instance.bastion,\n"
        '│   on bastion.tf line 17, in resource "aws_instance" "bastion":\n'
        '│   17: resource "aws_instance" "bastion" {\n'
        "│\n"
        "╵\n"
        "Releasing state lock. This may take a few moments..."
    )


def iac_invalid_param_edit_loop():
    # calls: 0 read, 1 aws, 2 write, 3 plan, 4 apply(fail); 5 write (re-edit) starts the repeat -> loop_start=5
    r = Run("iac_invalid_param_edit_loop", SHAPE, "loop", 5)
    ami = "data.aws_ssm_parameter.al2023.value"
    r.turn("Task: add an SSM-only bastion in the private subnets of prod.")
    read(
        r,
        "network/outputs.tf",
        'output "vpc_id" { value = module.vpc.vpc_id }\noutput "private_subnet_ids" { value = module.vpc.private_subnets }\noutput "public_subnet_ids" { value = module.vpc.public_subnets }\n',
    )
    aws(
        r,
        "aws ec2 describe-instance-type-offerings --location-type availability-zone --filters Name=instance-type,Values=t3.small,t3a.small,t3.micro --region eu-west-1 --query 'InstanceTypeOfferings[].[InstanceType,Location]' --output json",
        [
            ["t3.micro", "eu-west-1a"],
            ["t3.micro", "eu-west-1b"],
            ["t3.micro", "eu-west-1c"],
            ["t3.small", "eu-west-1a"],
            ["t3.small", "eu-west-1b"],
            ["t3.small", "eu-west-1c"],
            ["t3a.small", "eu-west-1a"],
            ["t3a.small", "eu-west-1b"],
            ["t3a.small", "eu-west-1c"],
        ],
        dur=1.4,
    )
    write(
        r,
        "bastion.tf",
        BASTION.format(ami=ami, itype="t3.small", subnet="private_subnet_ids[0]", extra=""),
    )
    tf(
        r,
        "plan",
        "-out=tfplan",
        plan_text(
            [],
            [
                ("aws_security_group.bastion", "created", ['+ name_prefix = "bastion-"']),
                (
                    "aws_instance.bastion",
                    "created",
                    [
                        '+ instance_type        = "t3.small"',
                        '+ iam_instance_profile = "bastion-ssm"',
                        "+ ami                  = (sensitive value)",
                    ],
                ),
            ],
            2,
            0,
            0,
            saved="tfplan",
        ),
        dur=7.7,
        when="2025-06-03T16:10:04Z",
    )
    tf(
        r,
        "apply",
        "tfplan",
        _bastion_err("e7a4c1d2-3f58-4b90-a6e1-92c0d7b5f318").replace(
            "aws_security_group.bastion: Refreshing state... [id=sg-0d81f4a62c9b3e057]\n",
            "aws_security_group.bastion: Creating...\naws_security_group.bastion: Creation complete after 2s [id=sg-0d81f4a62c9b3e057]\n",
        ),
        code=1,
        dur=6.9,
        when="2025-06-03T16:10:31Z",
    )
    r.turn(
        "InvalidParameterValue on RunInstances. Maybe t3.small capacity is the issue; switching to t3a.small."
    )
    cycles = [
        (
            dict(ami=ami, itype="t3a.small", subnet="private_subnet_ids[0]", extra=""),
            "1c9f0b7e-d264-4a35-8e17-5b3a90f2c6d4",
            "2025-06-03T16:12:02Z",
            "Same error. Perhaps the SSM AMI alias resolves to something odd; pin an explicit AMI id.",
        ),
        (
            dict(
                ami='"ami-0e9c4b7d12a6f3805"',
                itype="t3a.small",
                subnet="private_subnet_ids[0]",
                extra="",
            ),
            "58d2e6a0-0b4f-4c71-93d8-e1f7a2c5b960",
            "2025-06-03T16:14:47Z",
            "Still InvalidParameterValue. Try a different subnet in case 1a is constrained.",
        ),
        (
            dict(
                ami='"ami-0e9c4b7d12a6f3805"',
                itype="t3a.small",
                subnet="private_subnet_ids[1]",
                extra="",
            ),
            "a03b7f19-6e2c-45d8-b0a4-7c91e5d2f806",
            "2025-06-03T16:17:20Z",
            "Maybe it needs explicit root volume and IMDSv2 settings.",
        ),
        (
            dict(
                ami='"ami-0e9c4b7d12a6f3805"',
                itype="t3a.small",
                subnet="private_subnet_ids[1]",
                extra='  root_block_device {\n    volume_size = 20\n    volume_type = "gp3"\n  }\n  metadata_options {\n    http_tokens = "required"\n  }\n',
            ),
            "f6e28d4c-91a0-4b37-8c5f-3d0b7a2e1c94",
            "2025-06-03T16:20:55Z",
            "Going back to the smallest instance type to rule out sizing.",
        ),
        (
            dict(
                ami=ami,
                itype="t3.micro",
                subnet="private_subnet_ids[0]",
                extra='  metadata_options {\n    http_tokens = "required"\n  }\n',
            ),
            "2b8c5e0f-a7d3-4e16-9f42-c0e1b6d8a375",
            "2025-06-03T16:23:38Z",
            "Let me try another variation of the instance settings.",
        ),
    ]
    for fmt, req, when, thought in cycles:
        write(r, "bastion.tf", BASTION.format(**fmt))
        tf(
            r,
            "apply",
            "-auto-approve",
            _bastion_err(req),
            code=1,
            dur=5.8 + (int(req[:2], 16) % 17) / 10,
            when=when,
        )
        r.turn(thought)
    return r


def _passrole_err(req):
    return (
        "Acquiring state lock. This may take a few moments...\n"
        "aws_lambda_function.orders_ingest: Creating...\n"
        "╷\n"
        f"│ Error: creating Lambda Function (orders-ingest): operation error Lambda: CreateFunction, https response error StatusCode: 403, RequestID: {req}, api error AccessDeniedException: User: arn:aws:sts::418273645901:assumed-role/deploy-bot/terraform-session is not authorized to perform: iam:PassRole on resource: arn:aws:iam::418273645901:role/orders-ingest-exec because no identity-based policy allows the iam:PassRole action\n"
        "│\n"
        "│   with aws_lambda_function.orders_ingest,\n"
        '│   on lambda.tf line 12, in resource "aws_lambda_function" "orders_ingest":\n'
        '│   12: resource "aws_lambda_function" "orders_ingest" {\n'
        "│\n"
        "╵\n"
        "Releasing state lock. This may take a few moments..."
    )


ORDERS_LAMBDA_ACTIONS = [
    (
        "aws_lambda_function.orders_ingest",
        "created",
        [
            '+ function_name = "orders-ingest"',
            '+ runtime       = "python3.12"',
            '+ role          = "arn:aws:iam::418273645901:role/orders-ingest-exec"',
        ],
    ),
    ("aws_lambda_event_source_mapping.orders", "created", ["+ batch_size = 10"]),
]


def iac_plan_apply_passrole_loop():
    # calls: 0 init, 1 validate, 2 plan, 3 apply(fail); 4 plan again starts the repeated plan/apply cycle
    r = Run("iac_plan_apply_passrole_loop", SHAPE, "loop", 4)
    r.turn("Deploying the orders-ingest Lambda with its SQS trigger.")
    tf(r, "init", "", init_ok([]), dur=3.9, when="2025-06-06T11:30:12Z")
    tf(
        r,
        "validate",
        "",
        "Success! The configuration is valid.",
        dur=2.0,
        when="2025-06-06T11:30:20Z",
    )
    tf(
        r,
        "plan",
        "-out=tfplan",
        plan_text(
            [
                ("aws_iam_role.orders_ingest_exec", "orders-ingest-exec"),
                ("aws_sqs_queue.orders", "https://sqs.eu-west-1.amazonaws.com/418273645901/orders"),
            ],
            [
                (
                    "aws_cloudwatch_log_group.orders_ingest",
                    "created",
                    ['+ name = "/aws/lambda/orders-ingest"'],
                ),
                *ORDERS_LAMBDA_ACTIONS,
                (
                    "aws_iam_role_policy.orders_ingest_sqs",
                    "updated in-place",
                    ["~ policy = jsonencode( ... )"],
                ),
            ],
            3,
            1,
            0,
            saved="tfplan",
        ),
        dur=8.4,
        when="2025-06-06T11:30:41Z",
    )
    tf(
        r,
        "apply",
        "tfplan",
        _passrole_err("7c2f91e4-0a3b-4d8e-b5c6-19f0e3a7d248").replace(
            "aws_lambda_function.orders_ingest: Creating...\n",
            "aws_cloudwatch_log_group.orders_ingest: Creating...\naws_iam_role_policy.orders_ingest_sqs: Modifying... [id=orders-ingest-exec:sqs]\naws_cloudwatch_log_group.orders_ingest: Creation complete after 1s [id=/aws/lambda/orders-ingest]\naws_iam_role_policy.orders_ingest_sqs: Modifications complete after 1s [id=orders-ingest-exec:sqs]\naws_lambda_function.orders_ingest: Creating...\n",
        ),
        code=1,
        dur=5.6,
        when="2025-06-06T11:31:05Z",
    )
    r.turn(
        "AccessDenied on PassRole. The role policy was just modified in the same run; maybe the plan was computed against stale state. Re-planning."
    )
    small_plan = plan_text(
        [
            ("aws_iam_role.orders_ingest_exec", "orders-ingest-exec"),
            ("aws_cloudwatch_log_group.orders_ingest", "/aws/lambda/orders-ingest"),
            ("aws_sqs_queue.orders", "https://sqs.eu-west-1.amazonaws.com/418273645901/orders"),
        ],
        [
            *ORDERS_LAMBDA_ACTIONS,
        ],
        2,
        0,
        0,
        saved="tfplan",
    )
    cyc = [
        (
            "2025-06-06T11:32:10Z",
            "2025-06-06T11:32:36Z",
            "0e5b8a2d-7f14-4c93-a1d6-3b29c8e0f751",
            "Same PassRole denial. IAM is eventually consistent; re-plan and apply again.",
        ),
        (
            "2025-06-06T11:34:02Z",
            "2025-06-06T11:34:27Z",
            "d41a6c09-2e8f-4b75-9c3e-f0b17d5a2e86",
            "Still denied. Plan once more with a refresh and retry.",
        ),
        (
            "2025-06-06T11:36:48Z",
            "2025-06-06T11:37:15Z",
            "93f7e0b2-5c1d-4a68-8e29-6d0a4b3c7f15",
            "Plan looks right: 2 to add. Applying again.",
        ),
        (
            "2025-06-06T11:39:30Z",
            "2025-06-06T11:39:54Z",
            "b2d06e4a-8c37-41f9-a5b0-e7c29f1d3a68",
            "Retrying the plan/apply.",
        ),
        (
            "2025-06-06T11:42:11Z",
            "2025-06-06T11:42:38Z",
            "4f8a1c3e-69d2-4b07-b8e5-0c7d2a9f6e13",
            "One more plan and apply.",
        ),
    ]
    for i, (pw, aw, req, thought) in enumerate(cyc):
        tf(
            r,
            "plan",
            "-refresh=true -out=tfplan" if i % 2 else "-out=tfplan",
            small_plan,
            dur=7.9 + i * 0.3,
            when=pw,
        )
        tf(r, "apply", "tfplan", _passrole_err(req), code=1, dur=4.8 + (i % 3) * 0.6, when=aw)
        r.turn(thought)
    return r


def iac_stack_rollback_poll_loop():
    # calls: 0 plan, 1 apply(fail), 2 describe-stacks, 3 describe-stack-events, 4.. re-polling -> loop_start=4
    r = Run("iac_stack_rollback_poll_loop", SHAPE, "loop", 4)
    r.turn(
        "Bumping the legacy SFTP CloudFormation stack (managed via aws_cloudformation_stack) to the new security policy."
    )
    tf(
        r,
        "plan",
        "-out=tfplan",
        plan_text(
            [
                (
                    "aws_cloudformation_stack.legacy_sftp",
                    "arn:aws:cloudformation:eu-west-1:418273645901:stack/legacy-sftp/2c7a9e10-3b4f-11ee-8d21-0a5c7f3e9b41",
                )
            ],
            [
                (
                    "aws_cloudformation_stack.legacy_sftp",
                    "updated in-place",
                    [
                        "~ parameters = {",
                        '    ~ "SecurityPolicyName" = "TransferSecurityPolicy-2020-06" -> "TransferSecurityPolicy-2024-01"',
                        "  }",
                    ],
                )
            ],
            0,
            1,
            0,
            saved="tfplan",
        ),
        dur=6.2,
        when="2025-06-07T09:40:03Z",
    )
    tf(
        r,
        "apply",
        "tfplan",
        """Acquiring state lock. This may take a few moments...
aws_cloudformation_stack.legacy_sftp: Modifying... [id=arn:aws:cloudformation:eu-west-1:418273645901:stack/legacy-sftp/2c7a9e10-3b4f-11ee-8d21-0a5c7f3e9b41]
aws_cloudformation_stack.legacy_sftp: Still modifying... [10s elapsed]
aws_cloudformation_stack.legacy_sftp: Still modifying... [1m0s elapsed]
aws_cloudformation_stack.legacy_sftp: Still modifying... [3m0s elapsed]
aws_cloudformation_stack.legacy_sftp: Still modifying... [5m20s elapsed]
╷
│ Error: waiting for CloudFormation Stack (arn:aws:cloudformation:eu-west-1:418273645901:stack/legacy-sftp/2c7a9e10-3b4f-11ee-8d21-0a5c7f3e9b41) update: failed to update CloudFormation stack (UPDATE_ROLLBACK_FAILED): ["The following resource(s) failed to update: [TransferServer]. " "Resource handler returned message: \\"Unsupported security policy for endpoint type VPC_ENDPOINT (Service: Transfer, Status Code: 400, Request ID: 5d1e9b73-2a4c-4f08-86b7-c3e0a1f2d954)\\" (HandlerErrorCode: InvalidRequest)" "Resource handler returned message: \\"Cannot roll back: endpoint type VPC_ENDPOINT is deprecated (Service: Transfer, Status Code: 400, Request ID: 8a0c3f51-e6b2-49d7-a1f4-02d9e7b6c318)\\""]
│
│   with aws_cloudformation_stack.legacy_sftp,
│   on sftp.tf line 1, in resource "aws_cloudformation_stack" "legacy_sftp":
│    1: resource "aws_cloudformation_stack" "legacy_sftp" {
│
╵
Releasing state lock. This may take a few moments...""",
        code=1,
        dur=331.5,
        when="2025-06-07T09:45:51Z",
    )
    r.turn("Stack update failed and the rollback failed too. Let me look at its status.")
    stack = {
        "Stacks": [
            {
                "StackId": "arn:aws:cloudformation:eu-west-1:418273645901:stack/legacy-sftp/2c7a9e10-3b4f-11ee-8d21-0a5c7f3e9b41",
                "StackName": "legacy-sftp",
                "Parameters": [
                    {
                        "ParameterKey": "SecurityPolicyName",
                        "ParameterValue": "TransferSecurityPolicy-2024-01",
                    },
                    {"ParameterKey": "EndpointType", "ParameterValue": "VPC_ENDPOINT"},
                ],
                "CreationTime": "2023-08-15T12:04:33.918000+00:00",
                "LastUpdatedTime": "2025-06-07T09:40:21.550000+00:00",
                "RollbackConfiguration": {},
                "StackStatus": "UPDATE_ROLLBACK_FAILED",
                "StackStatusReason": "The following resource(s) failed to update: [TransferServer]. ",
                "DisableRollback": False,
                "NotificationARNs": [],
                "Capabilities": ["CAPABILITY_NAMED_IAM"],
                "Tags": [{"Key": "managed-by", "Value": "terraform"}],
                "EnableTerminationProtection": True,
                "DriftInformation": {"StackDriftStatus": "NOT_CHECKED"},
            }
        ]
    }
    events = {
        "StackEvents": [
            {
                "EventId": "TransferServer-UPDATE_FAILED-2025-06-07T09:45:40.218Z",
                "LogicalResourceId": "TransferServer",
                "PhysicalResourceId": "s-4f1b8e2c9a7d30615",
                "ResourceType": "AWS::Transfer::Server",
                "Timestamp": "2025-06-07T09:45:40.218000+00:00",
                "ResourceStatus": "UPDATE_FAILED",
                "ResourceStatusReason": 'Resource handler returned message: "Cannot roll back: endpoint type VPC_ENDPOINT is deprecated (Service: Transfer, Status Code: 400, Request ID: 8a0c3f51-e6b2-49d7-a1f4-02d9e7b6c318)" (HandlerErrorCode: InvalidRequest)',
            },
            {
                "EventId": "6f0b2d40-437e-11f0-9a1c-06e5b7d3c2f1",
                "LogicalResourceId": "legacy-sftp",
                "ResourceType": "AWS::CloudFormation::Stack",
                "Timestamp": "2025-06-07T09:45:41.007000+00:00",
                "ResourceStatus": "UPDATE_ROLLBACK_FAILED",
                "ResourceStatusReason": "The following resource(s) failed to update: [TransferServer]. ",
            },
            {
                "EventId": "4c9e1a70-437d-11f0-b2f8-0a1d3e6c9b57",
                "LogicalResourceId": "legacy-sftp",
                "ResourceType": "AWS::CloudFormation::Stack",
                "Timestamp": "2025-06-07T09:43:12.664000+00:00",
                "ResourceStatus": "UPDATE_ROLLBACK_IN_PROGRESS",
                "ResourceStatusReason": "The following resource(s) failed to update: [TransferServer]. ",
            },
            {
                "EventId": "TransferServer-UPDATE_FAILED-2025-06-07T09:43:11.902Z",
                "LogicalResourceId": "TransferServer",
                "PhysicalResourceId": "s-4f1b8e2c9a7d30615",
                "ResourceType": "AWS::Transfer::Server",
                "Timestamp": "2025-06-07T09:43:11.902000+00:00",
                "ResourceStatus": "UPDATE_FAILED",
                "ResourceStatusReason": 'Resource handler returned message: "Unsupported security policy for endpoint type VPC_ENDPOINT (Service: Transfer, Status Code: 400, Request ID: 5d1e9b73-2a4c-4f08-86b7-c3e0a1f2d954)" (HandlerErrorCode: InvalidRequest)',
            },
        ]
    }
    ds = "aws cloudformation describe-stacks --stack-name legacy-sftp"
    dq = "aws cloudformation describe-stacks --stack-name legacy-sftp --query 'Stacks[0].StackStatus' --output json"
    de = "aws cloudformation describe-stack-events --stack-name legacy-sftp --max-items 4"
    aws(r, ds, stack, dur=1.0)
    aws(r, de, events, dur=1.2)
    r.turn(
        "It's in UPDATE_ROLLBACK_FAILED. CloudFormation may still be settling; I'll wait and check again."
    )
    aws(r, ds, stack, dur=0.9)
    aws(r, dq, '"UPDATE_ROLLBACK_FAILED"', dur=0.8)
    aws(r, de, events, dur=1.1)
    r.turn("No change yet. Giving it a few more minutes.")
    aws(r, dq, '"UPDATE_ROLLBACK_FAILED"', dur=0.7)
    aws(r, ds, stack, dur=1.0)
    r.turn("Still UPDATE_ROLLBACK_FAILED. Checking again.")
    aws(r, dq, '"UPDATE_ROLLBACK_FAILED"', dur=0.8)
    aws(r, de, events, dur=1.3)
    aws(r, dq, '"UPDATE_ROLLBACK_FAILED"', dur=0.7)
    r.turn("Waiting for the stack to recover before re-running terraform.")
    aws(r, ds, stack, dur=0.9)
    return r


RUNS = [
    iac_plan_fix_iterate,
    iac_lock_wait_ci,
    iac_targeted_rollout,
    iac_codebase_survey,
    iac_stale_lock_apply_loop,
    iac_invalid_param_edit_loop,
    iac_plan_apply_passrole_loop,
    iac_stack_rollback_poll_loop,
]
