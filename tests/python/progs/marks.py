# --mark-function (issue 13): pyapp.handle is called 25 times, through the module, through
# a table filled at import and through a method; each call is a mark.
import pyapp

routes = {"/": pyapp.handle}
for i in range(10):
    pyapp.handle(i)
for i in range(10):
    routes["/"](i)
h = pyapp.Handler()
for i in range(5):
    h.run()
