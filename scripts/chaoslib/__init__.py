"""chaoslib — the parts of scripts/chaos that every topology shares.

  resp.py    the one RESP client (a command on a fresh connection)
  nodes.py   server processes (start, kill, pause), free ports, the clock,
             the TLS certificates
  proxy.py   the fault proxy (pass, blackhole, delay, late delivery)
  checks.py  the checker: C0-C8 over a scenario's logs

Only the standard library. Nothing here imports scripts/chaos or a
scenario module (scripts/chaos_scenarios/*.py); they import this.
"""
