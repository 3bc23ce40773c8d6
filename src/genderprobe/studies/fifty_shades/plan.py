"""Why ``genderprobe plan`` has no plan for fifty-shades (genderprobe.analysis.planning)."""

PLANNERS: dict = {}
NOT_PLANNED = {
    "fifty-shades": "its headline, pearson_r (better higher) and mse (better lower) against human ratings, "
                    "measures agreement with no neutral value that a bias is measured from, and its answers are "
                    "open-ended ratings with no calibration model of chosen strength",
}
