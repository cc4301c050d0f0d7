"""``torchplug.nn.modules``: every built-in layer."""

from __future__ import annotations

from .activation import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .embedding_bag import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .unpooling import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403,E402
from .channelshuffle import *  # noqa: F401,F403,E402
from .distance import *  # noqa: F401,F403,E402
from .fold import *  # noqa: F401,F403,E402
from .padding import *  # noqa: F401,F403,E402
from .pixelshuffle import *  # noqa: F401,F403,E402
from .upsampling import *  # noqa: F401,F403,E402
from .data_parallel import *  # noqa: F401,F403,E402
from .lazy import *  # noqa: F401,F403,E402
from .sync_batchnorm import *  # noqa: F401,F403,E402
