"""The three words every acceptance check ends in (the checks write them, the sign-off tool reads them)."""
PASS, FAIL, NOT_MEASURED = "PASS", "FAIL", "NOT MEASURED"
