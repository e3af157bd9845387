"""rm_client: a typed, safe client for the YARN ResourceManager REST API of Hadoop 3.3.6.

Standalone (no ``harvester`` import). Start with :class:`RMClient` and :class:`RMClientConfig`;
every failure is an :class:`RMError` (see :mod:`rm_client.errors` for the tree). The wire
shapes (models, decoders, encoders) live in :mod:`rm_client.wire`, recorded behaviour of the
real RM is cited in each module's docstring (fixtures: ../shared/fixtures/yarn-3.3.6).
"""

from rm_client.client import NODE_STATES, RMClient
from rm_client.config import RMClientConfig
from rm_client.errors import (
    Problem,
    RMAuthError,
    RMBadRequestError,
    RMConfigError,
    RMConnectionError,
    RMDecodeError,
    RMError,
    RMForbiddenError,
    RMHTTPError,
    RMNotFoundError,
    RMResponseTooLargeError,
    RMServerError,
    RMStandbyError,
    RMTimeoutError,
    RMTransportError,
    RMUnauthorizedError,
    RMValidationError,
)
from rm_client.query import AppQuery
from rm_client.validation import SignalCommand
from rm_client.wire.app_ops import AppStatItem, NewApplication
from rm_client.wire.apps import App, AppTimeout, ResourceRequest
from rm_client.wire.attempts import AppAttempt, AppAttemptDetail, Container
from rm_client.wire.bodies import AppSubmission, NodeResourceOption
from rm_client.wire.cluster import ClusterInfo, ClusterMetrics, ClusterUserInfo
from rm_client.wire.labels import NodeLabel
from rm_client.wire.nodes import Node, ResourceUtilization
from rm_client.wire.reservations import (
    DAY_MS,
    Interpreter,
    ReservationDefinition,
    ReservationInfo,
    ReservationRequest,
    ResourceAllocation,
)
from rm_client.wire.resources import PartitionResourceUsage, Resource, ResourceInformation
from rm_client.wire.scheduler import Queue, QueueAccess, SchedulerInfo

__all__ = [
    "DAY_MS",
    "NODE_STATES",
    "App",
    "AppAttempt",
    "AppAttemptDetail",
    "AppQuery",
    "AppStatItem",
    "AppSubmission",
    "AppTimeout",
    "ClusterInfo",
    "ClusterMetrics",
    "ClusterUserInfo",
    "Container",
    "Interpreter",
    "NewApplication",
    "Node",
    "NodeLabel",
    "NodeResourceOption",
    "PartitionResourceUsage",
    "Problem",
    "Queue",
    "QueueAccess",
    "RMAuthError",
    "RMBadRequestError",
    "RMClient",
    "RMClientConfig",
    "RMConfigError",
    "RMConnectionError",
    "RMDecodeError",
    "RMError",
    "RMForbiddenError",
    "RMHTTPError",
    "RMNotFoundError",
    "RMResponseTooLargeError",
    "RMServerError",
    "RMStandbyError",
    "RMTimeoutError",
    "RMTransportError",
    "RMUnauthorizedError",
    "RMValidationError",
    "ReservationDefinition",
    "ReservationInfo",
    "ReservationRequest",
    "Resource",
    "ResourceAllocation",
    "ResourceInformation",
    "ResourceRequest",
    "ResourceUtilization",
    "SchedulerInfo",
    "SignalCommand",
]
