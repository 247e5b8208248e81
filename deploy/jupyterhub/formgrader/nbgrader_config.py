"""nbgrader in the formgrader service: the course's own configuration (hardened autograde and feedback, and the
hardened collect behind the Collect button) on the instructor's course folder, and the class's exchange."""
import os

c = get_config()  # noqa: F821

import autograder  # noqa: E402  (the installed course package)

load_subconfig(os.path.join(os.path.dirname(autograder.__file__), "nbgrader_config.py"))  # noqa: F821
c.CourseDirectory.root = os.environ["FXCOURSE_COURSE_ROOT"]
c.Exchange.root = os.environ.get("FXCOURSE_EXCHANGE", "/srv/nbgrader/exchange")
