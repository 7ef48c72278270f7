import ArgumentParser
import Crypto
import Logging
print("hi")
