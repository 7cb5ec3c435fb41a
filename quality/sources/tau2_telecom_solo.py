"""Convert tau2-bench telecom simulation results in solo ("no-user") mode to OTLP JSON traces.

Why: in solo mode there is no simulated user; the agent gets the ticket and operates both the CRM
tools and the customer's phone tools itself until it emits ``###STOP###``. That is an autonomous
single-agent tool loop (long runs of diagnostic and toggle calls), a different control regime
from the dual-control runs in ``tau2_telecom``. The conversion is the same code
(``tau2_telecom.py``), with this source's files and name.

Usage: python3 quality/sources/tau2_telecom_solo.py --raw <tau2-bench git dir or extracted dir> --out DIR
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tau2_telecom

SOURCE = "tau2_telecom_solo"
FILES = [
    ("gpt-4.1_telecom_no-user_gpt-4.1_1trials.json", "gpt-4.1"),
    (
        "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm_telecom_no-user_gpt-4.1_1trials.json",
        "ft-gpt-4.1-tau2-full-sft",
    ),
]
AGENT_NAME = "tau2-bench llm_agent_solo (telecom, no user)"

if __name__ == "__main__":
    tau2_telecom.main(source=SOURCE, files=FILES, agent=AGENT_NAME)
