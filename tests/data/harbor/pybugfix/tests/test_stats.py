import sys
import unittest

sys.path.insert(0, "/workspace")
import stats  # noqa: E402  (the agent's code, by design: see docs/harbor.md)


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(stats.mean([1, 2, 3]), 2.0)
        self.assertEqual(stats.mean([5]), 5.0)

    def test_empty(self):
        with self.assertRaises(ValueError):
            stats.mean([])


if __name__ == "__main__":
    unittest.main()
