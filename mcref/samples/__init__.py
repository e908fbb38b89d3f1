"""Sample sets against sample sets, and the diversity of a set (docs/methods.md, "Sample sets
against sample sets").

Two sets X (n × d) and Y (m × d): one law or two? Each statistic (MMD², energy distance,
Fréchet distance, precision/recall/density/coverage, C2ST) is judged against its value on
permutations of the pooled sample, the exact null "one law" at these n and m. One set's
diversity: the Vendi score, compared between sets at a common size."""

from ._diversity import Diversity, DiversityDifference, DiversityRow, diversity
from ._knn import PRDC, prdc
from ._permutation import TwoSampleJoint, TwoSampleRow, TwoSampleTable, two_sample
from ._two_sample import (c2st, energy_distance, frechet_distance, frechet_distance_inf, median_heuristic, mmd,
                          read_samples)
from ._vendi import vendi_score

__all__ = ["mmd", "energy_distance", "frechet_distance", "frechet_distance_inf", "c2st", "median_heuristic",
           "read_samples", "two_sample", "TwoSampleTable", "TwoSampleRow", "TwoSampleJoint", "prdc", "PRDC",
           "vendi_score", "diversity", "Diversity", "DiversityRow", "DiversityDifference"]
