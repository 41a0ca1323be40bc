import sys
from pathlib import Path

# The scenario runner lives beside the tests.
sys.path.insert(0, str(Path(__file__).parent))
