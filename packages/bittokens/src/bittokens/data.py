"""Tasks and number sampling: ``make_task(name, n, seed=, split=)`` and ``score``.

See :mod:`bittokens._tasks` for the sampling scheme and the split rule.
"""

from ._tasks import TASKS as TASKS
from ._tasks import WORDS as WORDS
from ._tasks import Task as Task
from ._tasks import make_task as make_task
from ._tasks import sample_numbers as sample_numbers
from ._tasks import score as score

__all__ = ["TASKS", "WORDS", "Task", "make_task", "sample_numbers", "score"]
