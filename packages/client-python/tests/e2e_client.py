"""The client against the real service (run by apps/api/test/clients/client-python.e2e.test.ts,
which starts it and sets BASE_URL and SIMULATOR_NUMBERS): a test key, a send
to every simulator number and an ordinary one, each waited for to its final
state; a replay; the API's errors as typed exceptions; a verification started
and checked with the test key's code (zeros), each check outcome in the REST
words; a send through a fake gateway (PROXY_502_URL, PROXY_504_URL: nginx's
502 page before the service saw it, HAProxy's 504 page after it sent it),
retried with the same Idempotency-Key.

    BASE_URL=http://127.0.0.1:3000 python3 -m unittest discover -s tests -p "e2e_*.py"

Skipped without BASE_URL. The polling schedule is shortened here (the service
under test settles in about a second); the default is spec 6's.
"""

from __future__ import annotations

import json
import os
import sys
import unittest
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from sms_api import CHECK_OUTCOMES, CheckVerificationResult, Client, Message, Polling, RetryPolicy, SmsApiError  # noqa: E402

BASE_URL = os.environ.get("BASE_URL", "")
# packages/provider-sim's SIMULATOR_NUMBERS, handed over by the vitest file; spec 4.2's table otherwise.
SIM: Dict[str, str] = json.loads(os.environ.get("SIMULATOR_NUMBERS") or json.dumps({
    "rejected": "+995500000001",
    "unreachable": "+995500000002",
    "indeterminate": "+995500000003",
    "undeliverable": "+995500000004",
}))
# Fake gateways in front of the service (apps/api/test/support/fake-proxy.ts), set by the vitest file.
PROXIES: Dict[int, str] = {status: os.environ.get(f"PROXY_{status}_URL", "") for status in (502, 504)}
ORDINARY = "+995555123456"
FAST = Polling(initial_delay=0.25, factor=2, max_delay=1.0)
# A bound on each wait, so that a service that never settles fails the test instead of hanging it.
MAX_WAIT = 60.0


def masked(number: str) -> str:
    return f"+9955••••••{number[-2:]}"


@unittest.skipUnless(BASE_URL, "BASE_URL is not set (apps/api/test/clients/client-python.e2e.test.ts sets it)")
class AgainstTheService(unittest.TestCase):
    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        created = Client(BASE_URL).create_test_key()
        cls.test_key = created.test_key
        cls.client = Client(BASE_URL, created.test_key.api_key, 10, polling=FAST)

    def test_a_test_key(self) -> None:
        self.assertTrue(self.test_key.api_key.startswith("sk_test_"))
        self.assertTrue(self.test_key.project_id.startswith("prj_"))
        self.assertEqual(self.test_key.mode, "test")

    def test_every_simulator_number_and_an_ordinary_one_reach_their_final_state(self) -> None:
        self.assertEqual(set(SIM), {"rejected", "unreachable", "indeterminate", "undeliverable"})
        expected = {
            # recipient: (status of the 201, final status, final error code)
            SIM["rejected"]: ("failed", "failed", "provider_rejected"),
            SIM["indeterminate"]: ("unknown", "unknown", "provider_unavailable"),
            SIM["undeliverable"]: ("submitted", "undeliverable", "invalid_recipient"),
            ORDINARY: ("submitted", "delivered", None),
        }
        for to, (initial, final_status, error_code) in expected.items():
            with self.subTest(to=to):
                sent = self.client.send_message(to=to, template="verification_code", variables={"code": "482913"},
                                                locale="en")
                self.assertEqual((sent.status, sent.replayed, sent.attempts), (201, False, 1),
                                 "a 201 is never retried, unknown included")
                self.assertEqual(sent.message.status, initial)
                self.assertEqual(sent.message.to, masked(to))
                self.assertEqual(sent.message.segments, 1)
                self.assertTrue(sent.message.id.startswith("msg_"))
                self.assertTrue((sent.request_id or "").startswith("req_"))
                self.assertIsNotNone(sent.rate_limit)
                seen: List[Message] = []
                final = self.client.wait_for_final_status(sent.message.id, on_update=seen.append,
                                                          max_wait=MAX_WAIT)
                self.assertEqual(final.id, sent.message.id)
                self.assertEqual(final.status, final_status)
                self.assertEqual(final.error.code if final.error else None, error_code)
                self.assertTrue(final.is_final)
                self.assertEqual(seen[-1], final)
                self.assertTrue(all(not m.is_final for m in seen[:-1]))

    def test_the_unreachable_number_is_retried_with_the_same_key_and_then_raised_keeping_nothing(self) -> None:
        waits: List[float] = []
        keys: List[str] = []

        def new_key() -> str:
            keys.append(f"py-e2e-unreachable-{len(keys)}")
            return keys[-1]

        # The waits are recorded, not slept: Retry-After is seconds.
        client = Client(BASE_URL, self.test_key.api_key, 10, retry=RetryPolicy(attempts=2), sleep=waits.append,
                        new_idempotency_key=new_key)
        for attempt in range(2):
            with self.assertRaises(SmsApiError) as raised:
                client.send_message(to=SIM["unreachable"], template="login_code", variables={"code": "7351"})
            error = raised.exception
            self.assertEqual((error.code, error.status, error.attempts), ("provider_unavailable", 503, 2))
            self.assertTrue((error.request_id or "").startswith("req_"))
            self.assertIsNotNone(error.retry_after)
            self.assertGreater(error.retry_after or 0, 0)
            self.assertEqual(len(waits), attempt + 1, "one wait between the two attempts of each send")
            self.assertEqual(waits[-1], float(error.retry_after or 0), "the wait is the answer's Retry-After")
        self.assertEqual(keys, ["py-e2e-unreachable-0", "py-e2e-unreachable-1"], "one key per logical send")
        # Nothing was kept under the key: it sends a new message now.
        later = self.client.send_message(to=ORDINARY, template="login_code", variables={"code": "7351"},
                                         idempotency_key=keys[0])
        self.assertEqual((later.status, later.replayed), (201, False))

    def test_a_replay_and_the_apis_errors_as_typed_exceptions(self) -> None:
        first = self.client.send_message(to=ORDINARY, template="password_reset_code",
                                         variables={"code": "4821", "minutes": "10"})
        again = self.client.send_message(to=ORDINARY, template="password_reset_code",
                                         variables={"code": "4821", "minutes": "10"},
                                         idempotency_key=first.idempotency_key)
        self.assertEqual((again.status, again.replayed, again.message.id), (200, True, first.message.id))
        with self.assertRaises(SmsApiError) as reused:
            self.client.send_message(to=ORDINARY, template="login_code", variables={"code": "7351"},
                                     idempotency_key=first.idempotency_key)
        self.assertEqual((reused.exception.code, reused.exception.status, reused.exception.attempts),
                         ("idempotency_key_reused", 409, 1))
        with self.assertRaises(SmsApiError) as invalid:
            self.client.send_message(to="+995 555 12 34 56", template="login_code", variables={"code": "7351"})
        self.assertEqual((invalid.exception.code, invalid.exception.status), ("invalid_recipient", 400))
        self.assertTrue((invalid.exception.request_id or "").startswith("req_"))
        with self.assertRaises(SmsApiError) as missing:
            self.client.get_message("msg_00000000000000000000000000")
        self.assertEqual((missing.exception.code, missing.exception.status), ("message_not_found", 404))
        with self.assertRaises(SmsApiError) as unauthorized:
            Client(BASE_URL, "sk_test_" + "x" * 43).get_message(first.message.id)
        self.assertEqual((unauthorized.exception.code, unauthorized.exception.status), ("invalid_api_key", 401))
        with self.assertRaises(SmsApiError) as no_key:
            Client(BASE_URL).get_message(first.message.id)
        self.assertEqual((no_key.exception.code, no_key.exception.status), ("unauthorized", 401))

    def test_a_verification_is_started_and_checked_with_the_test_keys_zeros(self) -> None:
        started = self.client.start_verification(to=ORDINARY, code_length=6, locale="en")
        self.assertEqual((started.status, started.replayed), (201, False))
        verification = started.verification
        self.assertEqual((verification.status, verification.attempts_remaining, verification.to),
                         ("pending", 5, masked(ORDINARY)))
        replay = self.client.start_verification(to=ORDINARY, code_length=6, locale="en",
                                                idempotency_key=started.idempotency_key)
        self.assertEqual((replay.replayed, replay.verification.id), (True, verification.id))
        wrong = self.client.check_verification(verification.id, "123456")
        self.assertEqual(wrong.outcome, "pending")
        self.assertEqual(wrong.verification.attempts_remaining if wrong.verification else None, 4)
        approved = self.client.check_verification(verification.id, "000000")
        self.assertEqual(approved.outcome, "approved")
        self.assertTrue(approved.approved)
        spent = self.client.check_verification(verification.id, "000000")
        self.assertEqual((spent.outcome, spent.verification), ("verification_not_pending", None))
        self.assertFalse(spent.approved)
        self.assertEqual(self.client.get_verification(verification.id).status, "approved")
        sms = self.client.wait_for_final_status(verification.message_id, max_wait=MAX_WAIT)
        self.assertEqual(sms.status, "delivered")
        failed = self.client.start_verification(to=SIM["rejected"])
        self.assertEqual(failed.verification.status, "send_failed")
        with self.assertRaises(SmsApiError) as unknown:
            self.client.get_verification("vrf_00000000000000000000000000")
        self.assertEqual((unknown.exception.code, unknown.exception.status), ("verification_not_found", 404))


    def test_each_check_outcome_in_the_rest_words(self) -> None:
        seen: List[str] = []

        def check(verification_id: str, code: str) -> CheckVerificationResult:
            result = self.client.check_verification(verification_id, code)
            seen.append(result.outcome)
            return result

        exhausted = self.client.start_verification(to="+995555123458", code_length=4).verification
        for left in (4, 3, 2, 1):
            wrong = check(exhausted.id, "1111")
            self.assertEqual((wrong.outcome, wrong.verification.status if wrong.verification else None,
                              wrong.verification.attempts_remaining if wrong.verification else None),
                             ("pending", "pending", left))
        last = check(exhausted.id, "1111")
        self.assertEqual((last.outcome, last.verification.status if last.verification else None, last.approved),
                         ("max_attempts_reached", "max_attempts_reached", False))
        ended = check(exhausted.id, "0000")
        self.assertEqual((ended.outcome, ended.verification, ended.approved), ("verification_not_pending", None, False))
        self.assertIn("max_attempts_reached", ended.message or "")
        self.assertTrue((ended.request_id or "").startswith("req_"))
        fresh = self.client.start_verification(to="+995555123459", code_length=4).verification
        right = check(fresh.id, "0000")
        self.assertEqual((right.outcome, right.verification.status if right.verification else None, right.approved),
                         ("approved", "approved", True))
        again = check(fresh.id, "0000")
        self.assertEqual(again.outcome, "verification_not_pending")
        self.assertEqual(set(seen), set(CHECK_OUTCOMES), "every word of the vocabulary, and no other")

    @unittest.skipUnless(all(PROXIES.values()), "PROXY_502_URL and PROXY_504_URL are not set")
    def test_a_gateways_502_or_504_page_on_a_send_is_retried_with_the_same_key(self) -> None:
        for status, url in PROXIES.items():
            with self.subTest(status=status):
                # A project of its own, so that the vitest file can count its messages: exactly one.
                key = Client(BASE_URL).create_test_key().test_key
                waits: List[float] = []
                client = Client(url, key.api_key, 10, sleep=waits.append)
                sent = client.send_message(to=ORDINARY, template="login_code", variables={"code": "7351"},
                                           idempotency_key=f"py-proxy-{status}")
                # 502: the service never saw the first request (201 now); 504: it sent it, this is the replay.
                self.assertEqual((sent.attempts, sent.status, sent.replayed),
                                 (2, 200 if status == 504 else 201, status == 504))
                self.assertEqual(len(waits), 1)
                self.assertEqual(self.client.with_api_key(key.api_key).get_message(sent.message.id).id, sent.message.id)
                print(f"# proxy {status} {key.project_id}", flush=True)


if __name__ == "__main__":
    unittest.main()
