"""Tasks and number sampling: ``make_task(name, n, seed=, split=)`` and ``score``.

See :mod:`bittokens._tasks` for the sampling scheme and the split rule.
"""

from ._tasks import PAPER_RANGE as PAPER_RANGE
from ._tasks import SAMPLINGS as SAMPLINGS
from ._tasks import TASKS as TASKS
from ._tasks import WORDS as WORDS
from ._tasks import Task as Task
from ._tasks import make_task as make_task
from ._tasks import sample_numbers as sample_numbers
from ._tasks import score as score
from ._tasks import significant_bits as significant_bits

__all__ = [
    "PAPER_RANGE",
    "SAMPLINGS",
    "TASKS",
    "WORDS",
    "Task",
    "make_task",
    "sample_numbers",
    "score",
    "significant_bits",
]
