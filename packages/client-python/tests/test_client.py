"""The client on its own, against a scripted HTTP server on loopback (stub.py):
the requests it makes, how it reads answers and errors, which failures it
retries (with the same Idempotency-Key, honouring Retry-After), its timeouts,
and the polling schedule of spec 6 with a recorded sleep.

    cd packages/client-python && python3 -m unittest discover -s tests -p "test_*.py"
"""

from __future__ import annotations

import os
import re
import sys
import unittest
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from stub import StubServer, answer, closed_port, drop, envelope, hang, trickle  # noqa: E402

from sms_api import (  # noqa: E402
    Client,
    MessageError,
    Polling,
    RateLimit,
    RetryEvent,
    RetryPolicy,
    SmsApiError,
    SmsError,
    SmsNetworkError,
    SmsTimeoutError,
    Timeout,
    Verification,
    polling_delays,
)

UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
SEND = {"to": "+995555123456", "template": "verification_code", "variables": {"code": "4821"}}


def message(status: str = "submitted", error: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    return {
        "id": "msg_01m81b5h8058wzg6wcqtsa05cx",
        "object": "message",
        "to": "+9955••••••56",
        "status": status,
        "segments": 1,
        "error": error,
        "created_at": "2026-11-22T10:00:00Z",
        "updated_at": "2026-11-22T10:00:00Z",
    }


def verification(status: str = "pending", attempts: int = 5) -> Dict[str, Any]:
    return {
        "id": "vrf_01m81b5h80a4k2x9wq7zt3nd6e",
        "object": "verification",
        "to": "+9955••••••56",
        "status": status,
        "template": "verification_code",
        "locale": "ka",
        "attempts_remaining": attempts,
        "expires_at": "2026-11-22T10:10:00Z",
        "message_id": "msg_01m81b5h8058wzg6wcqtsa05cx",
        "created_at": "2026-11-22T10:00:00Z",
        "updated_at": "2026-11-22T10:00:00Z",
    }


class Recorder:
    """A client's sleep and on_retry that record instead of waiting."""

    def __init__(self) -> None:
        self.waits: List[float] = []
        self.retries: List[RetryEvent] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


class StubTestCase(unittest.TestCase):
    def stub(self, script: List[Any]) -> StubServer:
        server = StubServer(script)
        self.addCleanup(server.close)
        return server

    def client(self, server: StubServer, *, attempts: int = 3, random: float = 0.0,
               timeout: Any = Timeout(connect=2, read=5), api_key: Optional[str] = "sk_test_x",
               base_url: Optional[str] = None) -> "tuple[Client, Recorder]":
        recorder = Recorder()
        client = Client(
            base_url or server.url,
            api_key,
            timeout,
            retry=RetryPolicy(attempts=attempts, on_retry=recorder.retries.append),
            sleep=recorder.sleep,
            random=lambda: random,
        )
        return client, recorder


class RequestsAndAnswers(StubTestCase):
    def test_send_sends_the_key_the_idempotency_key_and_json_and_reads_201_rate_limits_and_a_replay(self) -> None:
        server = self.stub([
            answer(201, message(), {"RateLimit-Limit": "100", "RateLimit-Remaining": "99", "RateLimit-Reset": "42"}),
            answer(200, message(), {"Idempotent-Replayed": "true"}),
        ])
        client, _ = self.client(server)
        first = client.send_message(**SEND, locale="en", idempotency_key="k-1")
        self.assertEqual(first.status, 201)
        self.assertFalse(first.replayed)
        self.assertEqual(first.idempotency_key, "k-1")
        self.assertEqual(first.request_id, "req_stub")
        self.assertEqual(first.attempts, 1)
        self.assertEqual(first.rate_limit, RateLimit(limit=100, remaining=99, reset_seconds=42))
        self.assertEqual(first.message.id, "msg_01m81b5h8058wzg6wcqtsa05cx")
        self.assertEqual(first.message.status, "submitted")
        self.assertEqual(first.message.to, "+9955••••••56")
        again = client.send_message(**SEND, locale="en", idempotency_key="k-1")
        self.assertTrue(again.replayed)
        self.assertEqual(again.status, 200)
        self.assertIsNone(again.rate_limit)
        request = server.requests[0]
        self.assertEqual((request.method, request.path), ("POST", "/v1/messages"))
        self.assertEqual(request.headers["authorization"], "Bearer sk_test_x")
        self.assertEqual(request.headers["idempotency-key"], "k-1")
        self.assertEqual(request.headers["content-type"], "application/json")
        self.assertEqual(request.headers["accept"], "application/json")
        self.assertTrue(request.headers["user-agent"].startswith("sms-api-ge-python/"))
        self.assertEqual(request.json(), {**SEND, "locale": "en"})

    def test_locale_omitted_is_not_sent_and_a_generated_key_is_a_uuid4_returned_in_the_result(self) -> None:
        server = self.stub([answer(201, message()), answer(201, message())])
        client, _ = self.client(server)
        one = client.send_message(**SEND)
        two = client.send_message(**SEND)
        self.assertRegex(one.idempotency_key, UUID_V4)
        self.assertNotEqual(one.idempotency_key, two.idempotency_key, "a fresh key per logical send")
        self.assertEqual(server.keys(), [one.idempotency_key, two.idempotency_key])
        self.assertNotIn("locale", server.requests[0].json())

    def test_an_error_envelope_is_an_sms_api_error_with_code_message_status_request_id_and_retry_after(self) -> None:
        server = self.stub([
            envelope(429, "rate_limited", {"Retry-After": "17", "RateLimit-Limit": "5", "RateLimit-Remaining": "0",
                                           "RateLimit-Reset": "17"}, request_id="req_9"),
        ])
        client, _ = self.client(server, attempts=1)
        with self.assertRaises(SmsApiError) as raised:
            client.create_test_key()
        error = raised.exception
        self.assertIsInstance(error, SmsError)
        self.assertEqual((error.code, error.message, error.status, error.request_id, error.retry_after, error.attempts),
                         ("rate_limited", "rate_limited.", 429, "req_9", 17, 1))
        self.assertEqual(error.rate_limit, RateLimit(limit=5, remaining=0, reset_seconds=17))
        self.assertIsNone(server.requests[0].headers.get("authorization"), "test keys need no API key")

    def test_an_answer_that_is_not_the_envelope_is_unexpected_response_with_the_header_request_id(self) -> None:
        server = self.stub([
            answer(404, raw=b"<html>Not Found</html>", content_type="text/html", headers={"X-Request-Id": "req_px"}),
            answer(201, raw=b"not json"),
            answer(201, {"api_key": "sk_test_x"}),
        ])
        client, recorder = self.client(server)
        with self.assertRaises(SmsApiError) as proxy:
            client.send_message(**SEND)
        self.assertEqual((proxy.exception.code, proxy.exception.status, proxy.exception.request_id),
                         ("unexpected_response", 404, "req_px"))
        self.assertEqual(proxy.exception.attempts, 1, "a foreign page other than a gateway's 502/503/504 is not retried")
        with self.assertRaises(SmsApiError) as garbled:
            client.create_test_key()
        self.assertEqual((garbled.exception.code, garbled.exception.status), ("unexpected_response", 201))
        with self.assertRaises(SmsApiError) as partial:
            client.create_test_key()
        self.assertEqual(partial.exception.code, "unexpected_response")
        self.assertEqual(len(server.requests), 3)
        self.assertEqual(recorder.waits, [])

    def test_create_test_key_reads_the_six_fields_and_keeps_the_key_out_of_its_repr(self) -> None:
        key = {"api_key": "sk_test_" + "a" * 43, "project_id": "prj_1", "mode": "test",
               "claim_url": "https://sms.example.ge/claim/x", "expires_at": "2026-12-22T10:00:00Z",
               "next_steps": "Send a message.", "later_field": 1}
        server = self.stub([answer(201, key)])
        client, _ = self.client(server, api_key=None)
        result = client.create_test_key()
        self.assertEqual(result.test_key.api_key, key["api_key"])
        self.assertEqual(result.test_key.project_id, "prj_1")
        self.assertEqual(result.status, 201)
        self.assertNotIn("a" * 43, repr(result.test_key))
        self.assertEqual((server.requests[0].method, server.requests[0].path), ("POST", "/v1/test-keys"))

    def test_ids_are_escaped_into_the_path_and_a_base_path_is_kept(self) -> None:
        server = self.stub([answer(200, message("delivered")), answer(200, {"status": "not_ready"})])
        client, _ = self.client(server, base_url=server.url + "/sms/")
        self.assertEqual(client.get_message("a/b?c").status, "delivered")
        self.assertEqual(server.requests[0].path, "/sms/v1/messages/a%2Fb%3Fc")
        self.assertEqual(client.readiness(), {"status": "not_ready"})

    def test_with_api_key_keeps_the_options(self) -> None:
        server = self.stub([envelope(503, "provider_unavailable", {"Retry-After": "1"}), answer(200, message())])
        client, recorder = self.client(server, api_key=None)
        keyed = client.with_api_key("sk_test_new")
        keyed.get_message("msg_1")
        self.assertEqual(server.requests[1].headers["authorization"], "Bearer sk_test_new")
        self.assertEqual(recorder.waits, [1.0])


class Retries(StubTestCase):
    def test_429_rate_limited_with_retry_after_then_201_waits_retry_after_with_the_same_key(self) -> None:
        server = self.stub([
            envelope(429, "rate_limited", {"Retry-After": "2"}),
            answer(201, message(), {"X-Request-Id": "req_2"}),
        ])
        client, recorder = self.client(server)
        result = client.send_message(**SEND)
        self.assertEqual((result.status, result.attempts, result.replayed, result.request_id),
                         (201, 2, False, "req_2"))
        self.assertRegex(result.idempotency_key, UUID_V4)
        self.assertEqual(server.keys(), [result.idempotency_key, result.idempotency_key])
        self.assertEqual(recorder.waits, [2.0])
        self.assertEqual([(e.attempt, e.delay, e.error.code, e.method, e.path) for e in recorder.retries],
                         [(1, 2.0, "rate_limited", "POST", "/v1/messages")])

    def test_503_every_time_gives_up_after_the_attempts_waiting_retry_after_one_key_throughout(self) -> None:
        unavailable = envelope(503, "provider_unavailable", {"Retry-After": "5"})
        server = self.stub([unavailable, unavailable, unavailable, unavailable])
        client, recorder = self.client(server)
        with self.assertRaises(SmsApiError) as raised:
            client.send_message(**SEND)
        self.assertEqual((raised.exception.code, raised.exception.status, raised.exception.retry_after,
                          raised.exception.attempts), ("provider_unavailable", 503, 5, 3))
        self.assertEqual(len(server.requests), 3)
        self.assertEqual(recorder.waits, [5.0, 5.0])
        key = server.keys()[0]
        self.assertRegex(key or "", UUID_V4)
        self.assertEqual(server.keys(), [key, key, key])

    def test_500_internal_error_without_retry_after_backs_off_exponentially_with_equal_jitter(self) -> None:
        failing = envelope(500, "internal_error")
        low = self.stub([failing, failing, failing])
        client, recorder = self.client(low)
        with self.assertRaises(SmsApiError):
            client.send_message(**SEND, idempotency_key="mine")
        self.assertEqual(recorder.waits, [0.25, 0.5])
        self.assertEqual(low.keys(), ["mine", "mine", "mine"])
        high = self.stub([failing, failing, failing])
        client, recorder = self.client(high, random=0.5)
        with self.assertRaises(SmsApiError):
            client.send_message(**SEND)
        self.assertEqual(recorder.waits, [0.375, 0.75])

    def test_the_proxys_502_and_504_internal_error_on_a_send_are_retried_with_the_same_key(self) -> None:
        # What deploy/haproxy answers when no instance is up or none answers (docs/operations.md).
        server = self.stub([
            envelope(502, "internal_error", {"Retry-After": "1"}, request_id="req_proxy1"),
            envelope(504, "internal_error", {"Retry-After": "1"}, request_id="req_proxy2"),
            answer(200, message(), {"Idempotent-Replayed": "true"}),
        ])
        client, recorder = self.client(server)
        result = client.send_message(**SEND, idempotency_key="order-42")
        self.assertEqual((result.attempts, result.replayed), (3, True))
        self.assertEqual(server.keys(), ["order-42", "order-42", "order-42"])
        self.assertEqual(recorder.waits, [1.0, 1.0])

    def test_a_foreign_gateways_502_503_504_page_is_retried_on_a_send_and_a_read_not_on_unsafe_calls(self) -> None:
        for status in (502, 503, 504):
            page = answer(status, raw=f"<html><body><h1>{status}</h1></body></html>".encode(), content_type="text/html")
            with self.subTest(status=status):
                sent = self.stub([page, answer(201, message())])
                client, recorder = self.client(sent)
                result = client.send_message(**SEND)
                self.assertEqual((result.status, result.attempts), (201, 2))
                self.assertEqual(sent.keys(), [result.idempotency_key, result.idempotency_key])
                self.assertEqual([(e.error.code, e.error.status) for e in recorder.retries],
                                 [("unexpected_response", status)])
                read = self.stub([page, answer(200, message("delivered"))])
                client, _ = self.client(read)
                self.assertEqual(client.get_message("msg_1").status, "delivered")
                for call in ("create_test_key", "check_verification"):
                    unsafe = self.stub([page, answer(201, message())])
                    client, _ = self.client(unsafe)
                    with self.assertRaises(SmsApiError) as raised:
                        if call == "create_test_key":
                            client.create_test_key()
                        else:
                            client.check_verification("vrf_1", "000000")
                    self.assertEqual((raised.exception.code, raised.exception.status, raised.exception.attempts),
                                     ("unexpected_response", status, 1))
                    self.assertEqual(len(unsafe.requests), 1)

    def test_never_retries_a_201_unknown_daily_limit_reached_402_409_or_another_4xx(self) -> None:
        unknown = self.stub([
            answer(201, message("unknown", {"code": "provider_unavailable", "message": "?"})),
            answer(201, message()),
        ])
        client, recorder = self.client(unknown)
        sent = client.send_message(**SEND)
        self.assertEqual(sent.message.status, "unknown")
        self.assertEqual(sent.message.error, MessageError(code="provider_unavailable", message="?"))
        self.assertTrue(sent.message.is_final)
        self.assertEqual(len(unknown.requests), 1)
        self.assertEqual(recorder.waits, [])
        for status, code in [(429, "daily_limit_reached"), (402, "insufficient_credits"),
                             (409, "idempotency_key_reused"), (409, "verification_not_pending"),
                             (400, "invalid_recipient"), (401, "invalid_api_key"),
                             (403, "project_suspended")]:
            with self.subTest(code=code):
                refused = self.stub([envelope(status, code, {"Retry-After": "1"}), answer(201, message())])
                client, recorder = self.client(refused)
                with self.assertRaises(SmsApiError) as raised:
                    client.send_message(**SEND)
                self.assertEqual((raised.exception.code, raised.exception.status, raised.exception.attempts),
                                 (code, status, 1))
                self.assertEqual(len(refused.requests), 1)
                self.assertEqual(recorder.waits, [])

    def test_a_retry_after_longer_than_max_delay_is_not_waited_for(self) -> None:
        server = self.stub([envelope(429, "rate_limited", {"Retry-After": "3600"}), answer(201, message())])
        client, recorder = self.client(server)
        with self.assertRaises(SmsApiError) as raised:
            client.send_message(**SEND)
        self.assertEqual((raised.exception.code, raised.exception.retry_after), ("rate_limited", 3600))
        self.assertEqual(len(server.requests), 1)
        self.assertEqual(recorder.waits, [])

    def test_attempts_1_turns_retries_off(self) -> None:
        server = self.stub([envelope(503, "provider_unavailable"), answer(201, message())])
        client, _ = self.client(server, attempts=1)
        with self.assertRaises(SmsApiError) as raised:
            client.send_message(**SEND)
        self.assertEqual(raised.exception.attempts, 1)
        self.assertEqual(len(server.requests), 1)

    def test_network_failures_a_send_and_a_read_are_retried_a_new_test_key_is_not(self) -> None:
        send = self.stub([drop, answer(200, message(), {"Idempotent-Replayed": "true"})])
        client, _ = self.client(send)
        result = client.send_message(**SEND)
        self.assertEqual((result.replayed, result.attempts), (True, 2))
        self.assertEqual(len(set(send.keys())), 1)
        read = self.stub([drop, answer(200, message("delivered"))])
        client, _ = self.client(read)
        self.assertEqual(client.get_message("msg_1").status, "delivered")
        test_key = self.stub([drop, answer(201, {})])
        client, _ = self.client(test_key)
        with self.assertRaises(SmsNetworkError) as raised:
            client.create_test_key()
        self.assertEqual((raised.exception.code, raised.exception.status, raised.exception.attempts),
                         ("network_error", None, 1))
        self.assertIsInstance(raised.exception.__cause__, Exception)
        self.assertEqual(len(test_key.requests), 1)

    def test_a_refused_connection_is_a_network_error_after_every_attempt(self) -> None:
        recorder = Recorder()
        client = Client(f"http://127.0.0.1:{closed_port()}", "k", 2, sleep=recorder.sleep, random=lambda: 0)
        with self.assertRaises(SmsNetworkError) as raised:
            client.get_message("msg_1")
        self.assertEqual(raised.exception.attempts, 3)
        self.assertEqual(recorder.waits, [0.25, 0.5])


class Timeouts(StubTestCase):
    def test_a_server_that_never_answers_times_out_and_the_send_is_retried_with_the_same_key(self) -> None:
        server = self.stub([hang, hang])
        client, recorder = self.client(server, attempts=2, timeout=Timeout(connect=2, read=0.2))
        with self.assertRaises(SmsTimeoutError) as raised:
            client.send_message(**SEND, idempotency_key="k-7")
        error = raised.exception
        self.assertIsInstance(error, SmsError)
        self.assertEqual((error.code, error.status, error.request_id, error.attempts), ("timeout", None, None, 2))
        self.assertEqual(server.keys(), ["k-7", "k-7"])
        self.assertEqual(len(recorder.waits), 1)

    def test_an_answer_that_trickles_past_the_read_timeout_times_out(self) -> None:
        server = self.stub([trickle])
        client, _ = self.client(server, attempts=1, timeout=Timeout(connect=2, read=0.3))
        with self.assertRaises(SmsTimeoutError) as raised:
            client.get_message("msg_1")
        self.assertEqual(raised.exception.attempts, 1)

    def test_a_timed_out_test_key_is_not_retried(self) -> None:
        server = self.stub([hang, answer(201, {})])
        client, _ = self.client(server, timeout=(2, 0.2))
        with self.assertRaises(SmsTimeoutError):
            client.create_test_key()
        self.assertEqual(len(server.requests), 1)


class WaitForFinalStatus(StubTestCase):
    def test_the_schedule_is_2_s_doubling_capped_at_30_s(self) -> None:
        delays = polling_delays()
        self.assertEqual([next(delays) for _ in range(8)], [2, 4, 8, 16, 30, 30, 30, 30])

    def test_reads_after_2_4_8_16_30_s_and_stops_at_the_first_final_status(self) -> None:
        statuses = ["queued", "submitted", "submitted", "submitted", "delivered", "delivered"]
        server = self.stub([answer(200, message(status)) for status in statuses])
        client, recorder = self.client(server)
        seen: List[str] = []
        final = client.wait_for_final_status("msg_1", on_update=lambda m: seen.append(m.status))
        self.assertEqual(final.status, "delivered")
        self.assertEqual(recorder.waits, [2, 4, 8, 16, 30])
        self.assertEqual(seen, statuses[:5])
        self.assertEqual(len(server.requests), 5)
        self.assertTrue(all(r.path == "/v1/messages/msg_1" for r in server.requests))

    def test_the_schedule_is_injectable_per_client_and_per_call(self) -> None:
        server = self.stub([answer(200, message(s)) for s in ["submitted", "undeliverable", "submitted", "failed"]])
        recorder = Recorder()
        client = Client(server.url, "k", polling=Polling(initial_delay=0.1, max_delay=0.15), sleep=recorder.sleep)
        self.assertEqual(client.wait_for_final_status("msg_1").status, "undeliverable")
        self.assertEqual(recorder.waits, [0.1, 0.15])
        self.assertEqual(client.wait_for_final_status("msg_1", polling=Polling(initial_delay=1, factor=3,
                                                                                 max_delay=10)).status, "failed")
        self.assertEqual(recorder.waits, [0.1, 0.15, 1, 3])

    def test_where_the_server_holds_reads_the_first_read_is_at_2_s_then_each_held_read_follows_at_once(self) -> None:
        held = {"Preference-Applied": "wait=25"}
        server = self.stub([
            answer(200, message("submitted"), {"ETag": '"a"'}),
            answer(304, raw=b"", headers={"ETag": '"a"', **held}),
            answer(200, message("delivered"), {"ETag": '"b"', **held}),
        ])
        client, recorder = self.client(server, timeout=Timeout(connect=2, read=30))
        seen: List[str] = []
        final = client.wait_for_final_status("msg_1", on_update=lambda m: seen.append(m.status))
        self.assertEqual(final.status, "delivered")
        self.assertEqual(recorder.waits, [2])
        self.assertEqual(seen, ["submitted", "delivered"])
        self.assertEqual(
            [(r.headers.get("if-none-match"), r.headers.get("prefer")) for r in server.requests],
            [(None, None), ('"a"', "wait=25"), ('"a"', "wait=25")],
        )

    def test_a_server_that_does_not_hold_is_polled_on_the_schedule_with_if_none_match(self) -> None:
        server = self.stub([
            answer(200, message("submitted"), {"ETag": '"a"'}),
            answer(304, raw=b"", headers={"ETag": '"a"'}),
            answer(304, raw=b"", headers={"ETag": '"a"'}),
            answer(200, message("delivered"), {"ETag": '"b"'}),
        ])
        client, recorder = self.client(server)
        self.assertEqual(client.wait_for_final_status("msg_1").status, "delivered")
        # 2 s; at once (the first ETag); then 4 s and 8 s, as spec 6 says.
        self.assertEqual(recorder.waits, [2, 4, 8])
        self.assertEqual([r.headers.get("if-none-match") for r in server.requests], [None, '"a"', '"a"', '"a"'])

    def test_the_hold_asked_for_stays_5_s_inside_the_read_timeout(self) -> None:
        for timeout, prefer in [(Timeout(connect=2, read=30), "wait=25"), (Timeout(connect=2, read=12), "wait=7"),
                                (Timeout(connect=2, read=5), None)]:
            server = self.stub([
                answer(200, message("submitted"), {"ETag": '"a"'}),
                answer(200, message("delivered"), {"ETag": '"b"'}),
            ])
            client, _ = self.client(server, timeout=timeout)
            client.wait_for_final_status("msg_1")
            self.assertEqual(server.requests[1].headers.get("prefer"), prefer)

    def test_max_wait_by_the_injected_clock_raises_a_timeout_instead_of_sleeping_past_it(self) -> None:
        server = self.stub([answer(200, message("submitted")) for _ in range(5)])
        now = [0.0]
        waits: List[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            now[0] += seconds

        client = Client(server.url, "k", sleep=sleep, clock=lambda: now[0])
        with self.assertRaises(SmsTimeoutError) as raised:
            client.wait_for_final_status("msg_1", max_wait=20)
        self.assertEqual(raised.exception.code, "timeout")
        self.assertEqual(waits, [2, 4, 8])  # 14 s; the next read (at 30 s) would be past 20 s
        self.assertEqual(len(server.requests), 3)


class Verifications(StubTestCase):
    def test_start_sends_the_idempotency_key_and_only_the_fields_given_and_reads_201_and_a_replay(self) -> None:
        server = self.stub([
            answer(201, verification()),
            answer(200, verification(), {"Idempotent-Replayed": "true"}),
        ])
        client, _ = self.client(server)
        first = client.start_verification(to="+995555123456", code_length=6, idempotency_key="v-1")
        self.assertEqual((first.status, first.replayed, first.verification.status, first.idempotency_key),
                         (201, False, "pending", "v-1"))
        again = client.start_verification(to="+995555123456", code_length=6, idempotency_key="v-1")
        self.assertTrue(again.replayed)
        self.assertEqual(server.requests[0].path, "/v1/verifications")
        self.assertEqual(server.requests[0].headers["idempotency-key"], "v-1")
        self.assertEqual(server.requests[0].json(), {"to": "+995555123456", "code_length": 6})

    def test_a_generated_start_key_is_kept_across_a_503_retry(self) -> None:
        server = self.stub([envelope(503, "provider_unavailable", {"Retry-After": "5"}), answer(201, verification())])
        client, recorder = self.client(server)
        result = client.start_verification(to="+995555123456", template="login_code", locale="en")
        self.assertRegex(result.idempotency_key, UUID_V4)
        self.assertEqual(server.keys(), [result.idempotency_key, result.idempotency_key])
        self.assertEqual(recorder.waits, [5.0])
        self.assertEqual(server.requests[0].json(), {"to": "+995555123456", "template": "login_code", "locale": "en"})

    def test_check_outcomes_approved_pending_max_attempts_reached_and_verification_not_pending_and_404_raises(self) -> None:
        server = self.stub([
            answer(200, verification("approved")),
            answer(200, verification("pending", 4)),
            answer(200, verification("max_attempts_reached", 0)),
            envelope(409, "verification_not_pending", request_id="req_9"),
            envelope(404, "verification_not_found"),
        ])
        client, _ = self.client(server)
        vid = "vrf_01m81b5h80a4k2x9wq7zt3nd6e"
        approved = client.check_verification(vid, "000000")
        self.assertEqual(approved.outcome, "approved")
        self.assertTrue(approved.approved)
        wrong = client.check_verification(vid, "1")
        self.assertEqual(wrong.outcome, "pending")
        self.assertEqual(wrong.verification, Verification.from_json(verification("pending", 4)))
        self.assertFalse(wrong.approved)
        self.assertEqual(client.check_verification(vid, "1").outcome, "max_attempts_reached")
        not_pending = client.check_verification(vid, "1")
        self.assertEqual((not_pending.outcome, not_pending.verification, not_pending.message, not_pending.request_id),
                         ("verification_not_pending", None, "verification_not_pending.", "req_9"))
        with self.assertRaises(SmsApiError) as missing:
            client.check_verification("vrf/../x", "1")
        self.assertEqual(missing.exception.code, "verification_not_found")
        self.assertEqual(server.requests[0].path, f"/v1/verifications/{vid}/check")
        self.assertEqual(server.requests[0].json(), {"code": "000000"})
        self.assertEqual(server.requests[4].path, "/v1/verifications/vrf%2F..%2Fx/check")

    def test_a_check_is_not_retried_after_a_lost_answer(self) -> None:
        server = self.stub([drop, answer(200, verification("approved"))])
        client, _ = self.client(server)
        with self.assertRaises(SmsNetworkError):
            client.check_verification("vrf_1", "000000")
        self.assertEqual(len(server.requests), 1)

    def test_get_reads_a_verification(self) -> None:
        server = self.stub([answer(200, verification("canceled"))])
        client, _ = self.client(server)
        self.assertEqual(client.get_verification("vrf_01m81b5h80a4k2x9wq7zt3nd6e").status, "canceled")
        self.assertEqual(server.requests[0].method, "GET")


if __name__ == "__main__":
    unittest.main()
