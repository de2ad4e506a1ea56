"""Reading the Cloud Billing Catalog with Google's client (``google-cloud-billing``,
``CloudCatalogClient.list_skus``) over REST, at Google's address or the practice sandbox's. The
client is imported inside :func:`read_catalog` only: nothing on the CLI's or the first screen's
path loads google.cloud.billing."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

from tpuwizard.core.prices.cache import PriceBook
from tpuwizard.core.prices.skus import COMPUTE_SERVICE, classify, parse_skus

GOOGLE_BILLING_ENDPOINT = "https://cloudbilling.googleapis.com"
PAGE_SIZE = 5000  # the most services.skus.list returns in one page (Google's API reference)
READ_TIMEOUT = 30.0


class PriceReadError(Exception):
    """The catalog could not be read; the message says what is missing and what to do."""


def read_catalog(endpoint: str, credentials: Any, timeout: float = READ_TIMEOUT) -> PriceBook:
    """Every TPU price of the Compute Engine service's SKUs, read now."""
    return PriceBook(time.time(), tuple(parse_skus(_skus(endpoint, credentials, timeout))))


def _skus(endpoint: str, credentials: Any, timeout: float) -> Iterator[dict[str, Any]]:
    from google.api_core import exceptions as gx
    from google.auth import exceptions as auth_exc
    from google.cloud import billing_v1

    client = billing_v1.CloudCatalogClient(
        credentials=credentials, transport="rest", client_options={"api_endpoint": endpoint}
    )
    request = billing_v1.ListSkusRequest(parent=f"services/{COMPUTE_SERVICE}", page_size=PAGE_SIZE)
    try:
        for sku in client.list_skus(request=request, timeout=timeout):
            # Made a dict only when its description is a TPU's: a handful of the service's
            # thousands, and the conversion is a quarter of a cold read's time.
            if classify(sku.description) is not None:
                yield billing_v1.Sku.to_dict(sku, preserving_proto_field_name=False)
    except (gx.PermissionDenied, gx.Forbidden) as err:
        raise PriceReadError(refused_words(err)) from None
    except (gx.Unauthenticated, auth_exc.GoogleAuthError) as err:
        raise PriceReadError(
            "no credentials the Cloud Billing API accepts (gcloud auth application-default "
            f"login): {_message(err)}"
        ) from None
    except gx.GoogleAPIError as err:
        raise PriceReadError(f"the Cloud Billing API answered {_message(err)}") from None
    except OSError as err:  # no route to it, refused, timed out
        raise PriceReadError(f"the Cloud Billing API could not be reached ({err})") from None


def refused_words(err: BaseException) -> str:
    """A 403: the API is off for the project (SERVICE_DISABLED), or the caller may not use it."""
    text = _message(err)
    reasons = {str(getattr(d, "reason", "")) for d in getattr(err, "details", None) or []}
    if "SERVICE_DISABLED" in reasons or "has not been used" in text or "is disabled" in text:
        return (
            "the Cloud Billing API is not enabled (gcloud services enable "
            f"cloudbilling.googleapis.com): {text}"
        )
    return f"the Cloud Billing API refused the read (403): {text}"


def _message(err: BaseException) -> str:
    """The error's words, without the client's "GET http://...: " before them."""
    text = str(getattr(err, "message", None) or err)
    return re.sub(r"^[A-Z]+ \S+: ", "", text)
