"""tools/learn, the book's exercise tool, as a package of small modules.

book       where things are, the chapters, the exercises (read by tools/exercises.py)
workspace  the learner's files: made, completed with new stubs, reset, their state
sources    the grading build's sources: the book's files with the learner's steps spliced in
build      configuring and building the grading build
checks     running the checks under CTest and reading Catch2's reports
hints      a failed check as one sentence
grade      grading, chapter by chapter (or together), keeping the results of unchanged chapters
table      a chapter's result and the table grading prints
run        a chapter program on the learner's steps, compared with the book's output
points     the points table of docs/how-to-use.rst and `list`
cli        the command line

grading.cmake is the grading build's part of the root CMakeLists.txt; walk.sh times the
learner's loop (the README's figures).
"""
