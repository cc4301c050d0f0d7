"""Print this rank's launcher environment as one JSON line (for the launcher tests)."""

import json
import os
import sys

keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
        "TORCHELASTIC_RUN_ID"]
print("ENV " + json.dumps({**{k: os.environ.get(k) for k in keys}, "argv": sys.argv[1:], "name": __name__}),
      flush=True)
