"""Error answers exactly as Hadoop 3.3.6's RMWebServices sends them (captures/err-*).

Two forms exist and a client must handle both:

- `{"RemoteException":{"exception":..,"message":..,"javaClassName":..}}` (most errors; the
  `message` key is absent when the Java exception had none, e.g. a wrong HTTP method);
- plain text served as `application/json` (container signal errors, scheduler-conf on a
  non-mutable scheduler, the delegation-token 403).

A wrong HTTP method answers 500 with `Content-Type: application/json;charset=null`.
Handlers raise `RestError`; the server turns it into the response.
"""

from __future__ import annotations

from dataclasses import dataclass

from harvester.emulator.render_common import dumps

JSON_TYPE = "application/json;charset=utf-8"
NULL_CHARSET_JSON_TYPE = "application/json;charset=null"

BAD_REQUEST = "org.apache.hadoop.yarn.webapp.BadRequestException"
NOT_FOUND = "org.apache.hadoop.yarn.webapp.NotFoundException"
WEB_APP = "javax.ws.rs.WebApplicationException"


@dataclass
class RestError(Exception):
    """An error answer: status, body text and content type, ready to send."""

    status: int
    body: str
    content_type: str = JSON_TYPE

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.body[:200]}"


def remote(status: int, java_class: str, message: str | None, content_type: str = JSON_TYPE) -> RestError:
    """A RemoteException body; `exception` is the simple class name of `java_class`."""
    inner: dict[str, str] = {"exception": java_class.rsplit(".", 1)[-1]}
    if message is not None:
        inner["message"] = message
    inner["javaClassName"] = java_class
    return RestError(status, dumps({"RemoteException": inner}), content_type)


def plain(status: int, text: str) -> RestError:
    """Plain text labelled as JSON, as the RM does for a few endpoints."""
    return RestError(status, text, JSON_TYPE)


def bad_request(message: str) -> RestError:
    """BadRequestException (400); the RM prefixes the wrapped exception, e.g. 'java.lang.Exception: '."""
    return remote(400, BAD_REQUEST, message)


def bad_request_wrapped(message: str) -> RestError:
    """The common `java.lang.Exception: ...` wrapping of reservation/validation errors."""
    return bad_request(f"java.lang.Exception: {message}")


def not_found(message: str) -> RestError:
    return remote(404, NOT_FOUND, f"java.lang.Exception: {message}")


def method_not_allowed() -> RestError:
    """Jersey's answer to a wrong method on a known path: 500 without a message."""
    return remote(500, WEB_APP, None, NULL_CHARSET_JSON_TYPE)


def unknown_path(path: str) -> RestError:
    return remote(404, NOT_FOUND, f"java.lang.Exception: No handler found for {path}")


def invalid_app_id(app_id: str) -> RestError:
    """The 400 for an id that does not parse as application_<ts>_<n> (err-apps-id-state-put-bad-appid)."""
    if not app_id.startswith("application_"):
        why = (f"Invalid ApplicationId prefix: {app_id}. "
               "The valid ApplicationId should start with prefix application")
    else:
        why = f"Invalid ApplicationId: {app_id}"
    return bad_request(f"java.lang.IllegalArgumentException: {why}")


def unmarshal(detail: str) -> RestError:
    """A request body JAXB/Jackson could not read (400 WebApplicationException)."""
    return remote(400, WEB_APP, "javax.xml.bind.UnmarshalException\n - with linked exception:\n" + detail)


# The root elements JAXB knows in RMWebServices' context (err-apps-id-timeout-put-unwrapped):
# a body whose root is not one of them fails with this list in the message.
KNOWN_ROOT_ELEMENTS = (
    "ExecutionTypeRequest RemoteException activities activityNodeInfo allocationTagInfo "
    "allocationTagsInfo app appActivities appAllocationInfo appAttempt appAttempts "
    "appRequestAllocationInfo appStatInfo apps capacityScheduler capacitySchedulerLeafQueueInfo "
    "capacitySchedulerQueueInfo capacitySchedulerQueueInfoList clusterInfo clusterMetrics "
    "fairScheduler fairSchedulerLeafQueueInfo fairSchedulerQueueInfo fairSchedulerQueueInfoList "
    "fifoScheduler leafQueueTemplateInfo node nodeAllocationInfo nodeAttributeInfo "
    "nodeAttributesInfo nodes partitionQueueCapacitiesInfo partitionResourcesInfo queueAcl queueAcls "
    "queueCapacitiesInfo resourceInfo resourceInformations resourceRequests resourceUtilizationInfo "
    "resourcesInfo scheduler schedulerInfo statItem timeout timeouts userInfo userMetrics usersInfo"
).split()


def unexpected_root(element: str, column: int) -> RestError:
    expected = ",".join(f"<{{}}{e}>" for e in KNOWN_ROOT_ELEMENTS)
    return unmarshal(
        f"[com.sun.istack.SAXParseException2; lineNumber: 1; columnNumber: {column}; "
        f'unexpected element (uri:"", local:"{element}"). Expected elements are {expected}]'
    )
