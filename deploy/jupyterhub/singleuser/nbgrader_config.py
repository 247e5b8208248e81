"""nbgrader in the students' (and the instructor's own) JupyterLab on the course's hub: which course, which
exchange. The Assignments tab and nbgrader's fetch_assignment, submit and fetch_feedback read this."""
import os

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "fxcourse"
c.Exchange.root = os.environ.get("FXCOURSE_EXCHANGE", "/srv/nbgrader/exchange")
# Validate runs the test cells of the student's notebook, the visible ones: hidden tests are not in it.
c.Execute.timeout = 120
