import logging

logging.basicConfig()
log = logging.getLogger('shop')

if __name__ == '__main__':
    log.warning('starting')
