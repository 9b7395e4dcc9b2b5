from .methods import METHODS, mdlp, distance, chimerge, equal_width, equal_frequency
